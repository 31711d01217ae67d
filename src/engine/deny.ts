/**
 * Decisions the engine makes itself, without the policy: bad input, a policy error or a trap.
 * Always a deny (fail closed).
 */
import type { Decision, RoleCheckMode } from "./types.js";

export function engineDeny(reason: string, message: string, mode: RoleCheckMode = "enforce", status: 401 | 403 = 403): Decision {
  return { allow: false, status, reason, message, flow: null, route: null, deprecated: false, mode, would_deny: null };
}
