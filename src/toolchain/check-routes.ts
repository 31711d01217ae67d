/**
 * The build's last check: every route of the catalog gets a decision from the compiled policy, so the review
 * tools (which read the catalog) and the running service (which evaluates the policy) cannot disagree about a
 * route. Each route entry is evaluated once per token flow and method it names (GET when it names none), with a
 * distinct value for each of its parameters (two
 * parameters bound to one name must then conflict, as they would on a real call); a policy error, an input
 * the engine refuses, or a call matched to another route or to none refuses the build, naming the route's field.
 */
import { join } from "node:path";
import type { RouteEntry } from "../catalog/index.js";
import { dataErrorAt, entryMethods } from "../catalog/index.js";
import { applicationTokenFacts } from "../engine/index.js";
import type { Decision, DecisionInput, InProcessEngine, TokenShape } from "../engine/index.js";

const WHO = "portier-build-check";

/** The tokens the check calls with: a user with every role, synced, and an application; both of one tenant. */
function inputs(method: string, path: string, roles: string[], shape: TokenShape): [string, DecisionInput][] {
  const base = { method, path, synced: true, role_check: "enforce" as const };
  const tenant = { tenant_id: WHO };
  return [
    [
      "a user token",
      {
        ...base,
        roles,
        token: { sub: WHO, client_id: WHO, scope: ["apiclients"], auth_time: 1, idp: WHO, ...tenant },
      },
    ],
    [
      "an application token",
      { ...base, roles: [], token: { client_id: WHO, ...applicationTokenFacts(shape), ...tenant } },
    ],
  ];
}

/** A path of the template with a different value for each parameter: "/v2/{a}/x/{b}" -> "/v2/Check1/x/Check3". */
export function checkPath(template: string): string {
  return template
    .split("/")
    .map((segment, i) => (/^\{.+\}$/.test(segment) ? `Check${i}` : segment))
    .join("/");
}

const matched = (d: Decision) => (d.route ? `another route, ${d.route.template}` : `no route (${d.reason})`);

/** Why the policy's answer to an entry's own method and path is not a decision about that entry, if it is not. */
function problemOf(d: Decision, who: string, call: string, template: string): string | undefined {
  if (d.reason === "policy_error" || d.reason === "input_invalid")
    return (
      `the compiled policy cannot decide a call to it (${who}, ${call}): ${d.reason}` +
      (typeof d.detail === "string" ? `: ${d.detail}` : `: ${d.message}`)
    );
  if (d.route?.template !== template) return `the compiled policy matches a call to it (${call}) to ${matched(d)}`;
  if (d.reason === "method_not_allowed") return `the compiled policy has no entry for it (${call}): ${d.message}`;
  return undefined;
}

export function checkRoutes(engine: InProcessEngine, routes: RouteEntry[], dataDir: string): void {
  const roles = engine.roles.map((r) => r.id);
  routes.forEach((route, i) => {
    const path = checkPath(route.template);
    for (const method of entryMethods(route))
      for (const [who, input] of inputs(method, path, roles, engine.tokenShape)) {
        const problem = problemOf(engine.decide(input), who, `${method} ${path}`, route.template);
        if (problem)
          throw dataErrorAt(
            join(dataDir, "routes.json"),
            `routes[${i}].template`,
            `${problem}; no bundle is built whose policy fails on a route of its own catalog`,
          );
      }
  });
}
