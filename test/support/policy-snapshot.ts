/**
 * A fixed policy for createDecide in tests and benchmarks: one snapshot of an engine and its role names,
 * as PolicyHolder.current serves it (directory entries resolved with the same names, remembered per entry),
 * and the allow such a fake engine answers.
 */
import { entryRoles, type RoleResolver } from "../../src/directory/index.js";
import type { Decision, DecisionEngine } from "../../src/engine/types.js";

/** Role ids resolve to themselves: for fakes whose directory entries name ids. */
export const IDS_AS_NAMES: RoleResolver = (name) => name;

export function fixedPolicy(engine: DecisionEngine | undefined, resolveRole: RoleResolver = IDS_AS_NAMES) {
  const current = engine ? { engine, resolveRole, rolesOf: entryRoles(resolveRole) } : undefined;
  return { engine, current };
}

/** The allow of a fake engine: a user call (accessCode) on a deprecated route, enforced. */
export const ALLOW: Decision = {
  allow: true,
  status: 200,
  reason: "allowed",
  message: "ok",
  flow: "accessCode",
  route: null,
  deprecated: true,
  mode: "enforce",
  would_deny: null,
};
