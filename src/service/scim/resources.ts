/**
 * SCIM resources as Portier keeps them (RFC 7643): a User or a Group, as the identity manager wrote it, with the
 * server's `id` and `meta`. normalizeUser/normalizeGroup check what the mapping relies on, name the field at fault
 * (a ScimError 400 invalidValue), and accept the spellings identity managers are documented to send: Entra ID's
 * `active` as the string "True"/"False". Read-only attributes sent by a client (`id`, `meta`, a user's `groups`)
 * are replaced by the server's; a `password` is dropped. Core attributes sent inside an object keyed by the core
 * schema's URN (as an extension's are, RFC 7643 section 3) are taken as written at the top level.
 */
import { ScimError } from "./scim-error.js";

export const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
export const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
export const ENTERPRISE_USER_SCHEMA = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

export type ResourceType = "User" | "Group";

export interface ScimMeta {
  resourceType: ResourceType;
  created: string;
  lastModified: string;
  /** A weak ETag: the revision of the change that last wrote the resource. */
  version: string;
}

/** A stored resource: any attributes the client sent, with the server's id and meta. */
export interface ScimResource {
  id: string;
  schemas: string[];
  meta: ScimMeta;
  [attribute: string]: unknown;
}

/** A group member: the id of a user (or of a group: nested groups give no roles). */
export interface Member {
  value: string;
  [attribute: string]: unknown;
}

const invalid = (detail: string) => new ScimError(400, "invalidValue", detail);

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Boolean attributes as Entra ID sends them ("True", "False") or as JSON booleans. */
function booleanOf(v: unknown, field: string): boolean {
  if (typeof v === "boolean") return v;
  if (typeof v === "string" && /^(true|false)$/i.test(v)) return v.toLowerCase() === "true";
  throw invalid(`${field}: must be a boolean (true or false)`);
}

function optionalString(body: Record<string, unknown>, field: string): void {
  const v = body[field];
  if (v !== undefined && v !== null && typeof v !== "string") throw invalid(`${field}: must be a string`);
  if (v === null) delete body[field];
}

/**
 * The resource with the attributes of an object keyed by its core schema's URN moved to the top level: the form
 * `{"urn:ietf:params:scim:schemas:core:2.0:User": {"userName": ...}}` that fully qualified attribute names allow.
 * One attribute given both ways with different values is a 400 naming it.
 */
function unwrapCore(input: Record<string, unknown>, core: string): Record<string, unknown> {
  const key = Object.keys(input).find((k) => k.toLowerCase() === core.toLowerCase());
  if (key === undefined) return input;
  const inner = input[key];
  if (!isObject(inner)) throw new ScimError(400, "invalidSyntax", `${key}: must be an object of ${core} attributes`);
  const { [key]: _wrapper, ...out } = input;
  for (const [name, value] of Object.entries(inner)) {
    if (name in out && JSON.stringify(out[name]) !== JSON.stringify(value))
      throw new ScimError(400, "invalidSyntax", `${name}: given both at the top level and in ${key}, differently`);
    out[name] = value;
  }
  return out;
}

/** Strips what the server owns; checks the attributes the mapping reads. */
export function normalizeUser(input: unknown): Record<string, unknown> {
  if (!isObject(input)) throw invalid("the body must be a JSON object (a User resource)");
  // A password (Okta sends one) is never kept: RFC 7643 returns it never, and Portier has no use for it.
  const { id: _id, meta: _meta, groups: _groups, password: _password, ...body } = unwrapCore(input, USER_SCHEMA);
  const userName = body.userName;
  if (typeof userName !== "string" || userName.trim() === "") throw invalid("userName: required, a non-empty string");
  optionalString(body, "externalId");
  if (body.active === null) delete body.active;
  else if (body.active !== undefined) body.active = booleanOf(body.active, "active");
  if (body.roles === null) delete body.roles;
  else if (body.roles !== undefined) {
    if (!Array.isArray(body.roles)) throw invalid("roles: must be an array of {value}");
    body.roles = body.roles.map((role: unknown, i) => {
      const value = isObject(role) ? role.value : role;
      if (typeof value !== "string" || value.trim() === "")
        throw invalid(`roles[${i}].value: must be a role name (a non-blank string)`);
      return isObject(role) ? role : { value };
    });
  }
  body.schemas = withSchema(body.schemas, USER_SCHEMA);
  return body;
}

export function normalizeGroup(input: unknown): Record<string, unknown> {
  if (!isObject(input)) throw invalid("the body must be a JSON object (a Group resource)");
  const { id: _id, meta: _meta, ...body } = unwrapCore(input, GROUP_SCHEMA);
  if (typeof body.displayName !== "string" || body.displayName.trim() === "")
    throw invalid("displayName: required, a non-empty string");
  optionalString(body, "externalId");
  if (body.members === null || body.members === undefined) body.members = [];
  if (!Array.isArray(body.members)) throw invalid("members: must be an array of {value}");
  const seen = new Set<string>();
  const members: Member[] = [];
  for (const [i, m] of (body.members as unknown[]).entries()) {
    if (!isObject(m) || typeof m.value !== "string" || m.value === "")
      throw invalid(`members[${i}].value: must be the id of a user or group`);
    if (seen.has(m.value)) continue;
    seen.add(m.value);
    members.push(m as Member);
  }
  body.members = members;
  body.schemas = withSchema(body.schemas, GROUP_SCHEMA);
  return body;
}

function withSchema(schemas: unknown, core: string): string[] {
  const list = Array.isArray(schemas) ? schemas.filter((s): s is string => typeof s === "string") : [];
  return list.includes(core) ? list : [core, ...list];
}

export function membersOf(group: ScimResource | undefined): Member[] {
  return (group?.members as Member[] | undefined) ?? [];
}

/** A weak ETag for a revision. */
export const versionOf = (rev: number): string => `W/"${rev}"`;
