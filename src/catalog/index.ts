/**
 * The catalog: the route/role table, role catalog and tenant binding of data/, validated.
 */
export { loadCatalog, bundleData, fieldPath } from "./load-catalog.js";
export type { Catalog, RoleEntry, RouteEntry, TenantEntry } from "./load-catalog.js";
export { DataError } from "./data-error.js";
export { readJsonFile, parseJsonText, lineAndColumn } from "./read-json-file.js";
