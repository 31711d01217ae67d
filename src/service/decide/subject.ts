/**
 * Stage 2, subject: who the verified token names (sub, client_id, tenant_id) and their roles. The subject and
 * the tenant are the claims the bundle's project names (TokenShape; the spec's: sub and tenant_id). Roles come
 * from a roles claim when one is configured, else from the synced-users directory, whose record counts only for
 * a token of the same tenant (for any token when the project names no tenant claim). Both are resolved with the
 * role names of the bundle that will evaluate the decision (the caller passes that one snapshot's resolvers); a
 * record naming a role that bundle does not know is not this caller's (not synced). A caller without a subject
 * (an application) has no roles and is not synced.
 */
import { ownClaim } from "../../engine/index.js";
import type { TokenShape } from "../../engine/types.js";
import type { Directory } from "../../directory/index.js";
import type { EntryRoles, RoleResolver } from "../../directory/role-resolver.js";
import type { Subject } from "./types.js";

export interface Caller {
  subject: Subject;
  synced: boolean;
}

export interface SubjectSources {
  rolesClaim: string | undefined;
  directory: Pick<Directory, "lookup"> | undefined;
  resolveRole: RoleResolver;
  /** Directory entries' role ids under the same bundle's names as resolveRole. */
  rolesOf: EntryRoles;
  /** Which claims name the subject and the tenant (the same bundle's). */
  shape: TokenShape;
}

/**
 * A roles claim: a JSON array of role names, or a string holding one name or a comma-separated list.
 * Never split on spaces: spec labels have spaces ("Enseignant jeune"). Unknown names are dropped.
 */
function rolesFromClaim(value: unknown, resolve: RoleResolver): string[] | undefined {
  const list = typeof value === "string" ? value.split(",") : Array.isArray(value) ? value : undefined;
  if (!list) return undefined;
  const ids: string[] = [];
  for (const name of list) {
    const id = typeof name === "string" ? resolve(name) : undefined;
    if (id && !ids.includes(id)) ids.push(id);
  }
  return ids;
}

export function findSubject(claims: Record<string, unknown>, from: SubjectSources): Caller {
  const subClaim = ownClaim(claims, from.shape.subjectClaim);
  const sub = typeof subClaim === "string" ? subClaim : undefined;
  const tenantClaim = ownClaim(claims, from.shape.tenantClaim);
  const tenant = typeof tenantClaim === "string" ? tenantClaim : undefined;
  const anyTenant = from.shape.tenantClaim === null;
  let roles: string[] = [];
  let synced = false;
  if (sub !== undefined) {
    if (from.rolesClaim) {
      const fromClaim = rolesFromClaim(claims[from.rolesClaim], from.resolveRole);
      roles = fromClaim ?? [];
      synced = fromClaim !== undefined;
    } else {
      const entry = from.directory?.lookup(sub);
      // A record filed under another tenant (or a token naming no tenant, when the project has a tenant claim), or
      // naming a role this bundle does not know, is not this caller: not synced.
      const ids = entry && (anyTenant || entry.tenant_id === tenant) ? from.rolesOf(entry) : undefined;
      if (ids) {
        roles = ids as string[];
        synced = true;
      }
    }
  }
  // Keys in this order (sub, client_id, tenant_id, roles), each only when present: the answer's JSON shape.
  const subject = {} as Subject;
  if (sub !== undefined) subject.sub = sub;
  if (typeof claims.client_id === "string") subject.client_id = claims.client_id;
  if (tenant !== undefined) subject.tenant_id = tenant;
  subject.roles = roles;
  return { subject, synced };
}
