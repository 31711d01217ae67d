/**
 * The catalog: the route/role table, role catalog and tenant binding of data/, validated.
 */
export { loadCatalog, bundleData, routeIndex, tenantIndex } from "./load-catalog.js";
export type { Catalog, RoleEntry, RouteEntry } from "./load-catalog.js";
export { DataError } from "./data-error.js";
export { dataErrorAt } from "./read-json-file.js";
export { entryMethods } from "./route-methods.js";
export { roleNameKey, indexRoleNames, RoleNameError } from "./role-name-index.js";
