/**
 * The catalog: the route/role table, role catalog and tenant binding of data/, validated.
 */
export { loadCatalog, bundleData, routeIndex, tenantIndex, routeKey, fieldPath } from "./load-catalog.js";
export type { Catalog, RoleEntry, RouteEntry, TenantEntry, RouteIndex, TenantIndex } from "./load-catalog.js";
export { DataError } from "./data-error.js";
export { readJsonFile, parseJsonText, lineAndColumn } from "./read-json-file.js";
export { roleNameKey, indexRoleNames, RoleNameError } from "./role-names.js";
export type { RoleNames } from "./role-names.js";
