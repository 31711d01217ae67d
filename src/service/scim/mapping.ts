/**
 * From a SCIM User to a directory record, as configured (docs/scim.md "Mapping"):
 *
 *   | record field | from                                                                                   |
 *   |--------------|----------------------------------------------------------------------------------------|
 *   | sub          | --scim-sub-attribute: the user's `id`, `externalId` or `userName`                     |
 *   | tenant_id    | --scim-tenant-id (one tenant for every user), else --scim-tenant-attribute's value     |
 *   | roles        | the displayName of each group the user is a direct member of, then each `roles[].value`|
 *   | not synced   | `active: false`, no value for the sub or the tenant attribute                          |
 *
 * Role names are kept as written and resolved by each decision's bundle, as the directory file's are.
 */
import type { OverlayChange } from "../../directory/index.js";
import { isObject, type ScimResource } from "./resources.js";

export type SubAttribute = "id" | "externalId" | "userName";

export interface ScimMapping {
  sub: SubAttribute;
  /** An attribute path: `name`, `name.sub`, or `urn:...:name` (an extension's attribute). */
  tenantAttribute: string;
  /** One tenant for every user (the attribute is then not read). */
  tenantId?: string | undefined;
}

/** The value at a SCIM attribute path (names compare without case, as RFC 7643 2.1 says). */
export function attributeAt(resource: Record<string, unknown>, path: string): unknown {
  const colon = path.lastIndexOf(":");
  let at: unknown = resource;
  const steps = colon < 0 ? path.split(".") : [path.slice(0, colon), ...path.slice(colon + 1).split(".")];
  for (const step of steps) {
    if (!isObject(at)) return undefined;
    const key = Object.keys(at).find((k) => k.toLowerCase() === step.toLowerCase());
    at = key === undefined ? undefined : at[key];
  }
  return at;
}

/** The user's sub under the mapping, or undefined when the attribute has no string value. */
export function subOf(user: ScimResource, m: ScimMapping): string | undefined {
  const v = m.sub === "id" ? user.id : attributeAt(user, m.sub);
  return typeof v === "string" && v !== "" ? v : undefined;
}

/** The record a user maps to (entry null: not synced), given the names of the groups it belongs to. */
export function mapUser(user: ScimResource, groupNames: readonly string[], m: ScimMapping): OverlayChange | undefined {
  const sub = subOf(user, m);
  if (sub === undefined) return undefined;
  if (user.active === false) return { sub, entry: null };
  const tenant = m.tenantId ?? attributeAt(user, m.tenantAttribute);
  if (typeof tenant !== "string" || tenant === "") return { sub, entry: null };
  const names: string[] = [];
  const add = (name: string) => {
    if (!names.includes(name)) names.push(name);
  };
  for (const name of groupNames) add(name);
  for (const role of (user.roles as { value: string }[] | undefined) ?? []) add(role.value);
  return { sub, entry: { tenant_id: tenant, names } };
}
