/**
 * What each SCIM write request changes, planned against the current state without touching it: the resources
 * to write or delete (one step), the answer's resource and status. Preconditions (If-Match), uniqueness
 * (userName and externalId of users, displayName of groups, compared without case where RFC 7643 says so),
 * group members that name no resource, and the bound on resources are checked here. PATCH operations go
 * through the scim-patch library (RFC 7644 3.5.2: add, replace, remove, value filters such as
 * `members[value eq "id"]`, capitalised ops as Entra ID sends them), then the result is checked as a PUT would be.
 */
import { randomUUID } from "node:crypto";
import { scimPatch, type ScimPatchOperation, type ScimResource as PatchResource } from "scim-patch";
import { messageOf } from "../../errors/caught.js";
import { ScimError } from "./scim-error.js";
import type { Change, ScimState } from "./scim-state.js";
import {
  isObject,
  membersOf,
  normalizeGroup,
  normalizeUser,
  versionOf,
  type ResourceType,
  type ScimResource,
} from "./resources.js";

export const PATCH_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

export interface OperationLimits {
  /** Most operations in one PATCH. */
  maxOperations: number;
  /** Most users and groups held in total. */
  maxResources: number;
}

/** The revision the step will carry and its time. */
export interface StepContext {
  rev: number;
  now: string;
}

export interface Plan {
  changes: Change[];
  status: number;
  resource: ScimResource | null;
}

export type WriteRequest =
  | { kind: "create"; type: ResourceType; body: unknown }
  | { kind: "replace"; type: ResourceType; id: string; body: unknown; ifMatch?: string | undefined }
  | { kind: "patch"; type: ResourceType; id: string; body: unknown; ifMatch?: string | undefined }
  | { kind: "delete"; type: ResourceType; id: string; ifMatch?: string | undefined };

const notFound = (type: ResourceType, id: string) => new ScimError(404, undefined, `${type} ${id} not found`);

export function planWrite(state: ScimState, req: WriteRequest, ctx: StepContext, limits: OperationLimits): Plan {
  if (req.kind === "create") {
    if (state.size >= limits.maxResources)
      throw new ScimError(
        403,
        undefined,
        `the directory holds ${state.size} users and groups, its limit (--scim-max-resources); nothing was created`,
      );
    const id = randomUUID();
    const body = req.type === "User" ? normalizeUser(req.body) : normalizeGroup(req.body);
    const resource = stamp(req.type, id, body, ctx, ctx.now);
    check(state, resource, req.type);
    return { changes: [{ type: req.type, id, resource }], status: 201, resource };
  }
  const current = (req.type === "User" ? state.users : state.groups).get(req.id);
  if (!current) throw notFound(req.type, req.id);
  precondition(current, req.ifMatch);
  if (req.kind === "delete") {
    const changes: Change[] = [{ type: req.type, id: req.id, resource: null }];
    // A deleted user or group leaves the groups that list it, in the same step.
    const listing = req.type === "User" ? [...state.groupsOf(req.id)] : [...state.groups.keys()];
    for (const gid of listing) {
      const group = state.groups.get(gid);
      if (!group || gid === req.id || !membersOf(group).some((m) => m.value === req.id)) continue;
      const members = membersOf(group).filter((m) => m.value !== req.id);
      changes.push({ type: "Group", id: gid, resource: { ...group, members, meta: meta(group, ctx) } });
    }
    return { changes, status: 204, resource: null };
  }
  let body: unknown = req.body;
  if (req.kind === "patch") body = patched(current, req.body, limits);
  const normalized = req.type === "User" ? normalizeUser(body) : normalizeGroup(body);
  const resource = stamp(req.type, req.id, normalized, ctx, current.meta.created);
  check(state, resource, req.type);
  return { changes: [{ type: req.type, id: req.id, resource }], status: 200, resource };
}

function meta(current: ScimResource, ctx: StepContext): ScimResource["meta"] {
  return { ...current.meta, lastModified: ctx.now, version: versionOf(ctx.rev) };
}

function stamp(
  type: ResourceType,
  id: string,
  body: Record<string, unknown>,
  ctx: StepContext,
  created: string,
): ScimResource {
  const { schemas, ...rest } = body as { schemas: string[] };
  return {
    schemas,
    id,
    ...rest,
    meta: { resourceType: type, created, lastModified: ctx.now, version: versionOf(ctx.rev) },
  };
}

/** If-Match (RFC 7644 3.14): `*` or a list of ETags, one of which must be the current version. */
function precondition(current: ScimResource, ifMatch: string | undefined): void {
  if (ifMatch === undefined) return;
  const tags = ifMatch.split(",").map((t) => t.trim());
  const weakless = (t: string) => t.replace(/^W\//, "");
  if (tags.includes("*") || tags.some((t) => weakless(t) === weakless(current.meta.version))) return;
  throw new ScimError(
    412,
    undefined,
    `If-Match ${ifMatch} does not match the current version ${current.meta.version}; read the resource again`,
  );
}

function check(state: ScimState, r: ScimResource, type: ResourceType): void {
  if (type === "User") {
    const byName = state.userIdByName(r.userName as string);
    if (byName !== undefined && byName !== r.id)
      throw new ScimError(409, "uniqueness", `userName ${JSON.stringify(r.userName)} is taken by user ${byName}`);
    if (typeof r.externalId === "string") {
      const byExternal = state.userIdByExternalId(r.externalId);
      if (byExternal !== undefined && byExternal !== r.id)
        throw new ScimError(
          409,
          "uniqueness",
          `externalId ${JSON.stringify(r.externalId)} is taken by user ${byExternal}`,
        );
    }
    return;
  }
  const byName = state.groupIdByName(r.displayName as string);
  if (byName !== undefined && byName !== r.id)
    throw new ScimError(409, "uniqueness", `displayName ${JSON.stringify(r.displayName)} is taken by group ${byName}`);
  for (const [i, m] of membersOf(r).entries()) {
    if (!state.users.has(m.value) && !state.groups.has(m.value))
      throw new ScimError(400, "invalidValue", `members[${i}].value: no user or group has the id ${m.value}`);
  }
}

/** The resource after a PatchOp request's operations, applied by scim-patch to a copy. */
function patched(current: ScimResource, body: unknown, limits: OperationLimits): unknown {
  if (!isObject(body)) throw new ScimError(400, "invalidSyntax", "the body must be a PatchOp JSON object");
  const schemas = body.schemas;
  if (!Array.isArray(schemas) || !schemas.includes(PATCH_SCHEMA))
    throw new ScimError(400, "invalidSyntax", `schemas: must list ${PATCH_SCHEMA}`);
  const ops = body.Operations;
  if (!Array.isArray(ops) || ops.length === 0)
    throw new ScimError(400, "invalidSyntax", "Operations: must be a non-empty array");
  if (ops.length > limits.maxOperations)
    throw new ScimError(
      413,
      undefined,
      `Operations: ${ops.length} operations, more than the ${limits.maxOperations} allowed (--scim-max-operations)`,
    );
  for (const [i, op] of ops.entries()) {
    if (!isObject(op) || typeof op.op !== "string" || !/^(add|replace|remove)$/i.test(op.op))
      throw new ScimError(400, "invalidSyntax", `Operations[${i}].op: must be add, replace or remove`);
    if (op.path !== undefined && typeof op.path !== "string")
      throw new ScimError(400, "invalidPath", `Operations[${i}].path: must be a string`);
    if (typeof op.path === "string" && /^(id|meta)(\.|$)/i.test(op.path))
      throw new ScimError(400, "mutability", `Operations[${i}].path: ${op.path} is read-only`);
  }
  const copy = structuredClone(current) as unknown as PatchResource;
  try {
    return scimPatch(copy, ops as ScimPatchOperation[], { mutateDocument: true, treatMissingAsAdd: true });
  } catch (err) {
    const code = (err as { scimCode?: string }).scimCode;
    const scimType = code === "noTarget" ? "noTarget" : code === "invalidPath" ? "invalidPath" : "invalidValue";
    throw new ScimError(400, scimType, `Operations: ${messageOf(err)}`);
  }
}
