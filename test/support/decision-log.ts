/**
 * Test support: decision log lines as `portier serve` writes them, for the replay tests: the policy input of
 * an application calling GET /v1/roles (which the project's policy allows), with the outcome given as logged.
 */

export const APPLICATION_INPUT = {
  method: "GET",
  path: "/v1/roles",
  token: { client_id: "m", aud: ["apiclients"], scope: ["apiclients"], tenant_id: "t" },
  roles: [],
  synced: false,
  role_check: "enforce",
};

/** One decision line for APPLICATION_INPUT, logged with this outcome. */
export function applicationDecisionLine(allow: boolean, reason: string): string {
  return JSON.stringify({ event: "decision", input: APPLICATION_INPUT, allow, reason });
}
