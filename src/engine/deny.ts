/**
 * Decisions the engine makes itself, without the policy: bad input, a policy error or a trap.
 * Always a deny (fail closed).
 */
import type { PortierError } from "../errors/portier-error.js";
import type { Decision, RoleCheckMode } from "./types.js";

export function engineDeny(
  reason: string,
  message: string,
  mode: RoleCheckMode = "enforce",
  status: 401 | 403 = 403,
): Decision {
  return { allow: false, status, reason, message, flow: null, route: null, deprecated: false, mode, would_deny: null };
}

/**
 * A deny for an error: its code is the reason, its public text the message, its detail kept as `detail`
 * (logged only).
 */
export function errorDeny(err: PortierError, mode: RoleCheckMode = "enforce", status: 401 | 403 = 403): Decision {
  const decision = engineDeny(err.code, err.message, mode, status);
  return err.detail === undefined ? decision : { ...decision, detail: err.detail };
}
