/**
 * What a signed-in user of `portier dev` may call: every route and method the loaded bundle lists (its
 * portier/catalog entrypoint, as the access matrix reads it) asked of the running decision service with the user's
 * own access token, so the answer is the service's (token verified, directory record, compiled policy), never a
 * guess. A route with {codeOrganisme} is asked for each organisation code the catalog lists and shown with the first
 * code the user may call (their own organisation), else the first refusal that is not another organisation's.
 */
import { readCatalog, samplePath } from "../review/index.js";
import { InProcessEngine } from "../engine/index.js";

/** One route and method as the sign-in page shows it: the path asked and the service's answer. */
export interface RouteAccess {
  method: string;
  template: string;
  path: string;
  allow: boolean;
  reason: string;
  message: string;
}

/** Asks the decision service for the user's access to every route; the page renders the rows. */
export type AccessOfToken = (accessToken: string) => Promise<RouteAccess[]>;

/** POST /decide's batch limit (src/service/http/decide-body.ts MAX_BATCH). */
const BATCH = 100;
const ASK_TIMEOUT_MS = 10_000;
const CODE = "{codeOrganisme}";

interface Answer {
  allow: boolean;
  reason: string;
  message: string;
}

function isAnswer(value: unknown): value is Answer {
  if (typeof value !== "object" || value === null) return false;
  const a: Partial<Record<keyof Answer, unknown>> = value;
  return typeof a.allow === "boolean" && typeof a.reason === "string" && typeof a.message === "string";
}

async function askBatch(serviceUrl: string, requests: { method: string; path: string; token: string }[]) {
  const res = await fetch(`${serviceUrl}/decide`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ requests }),
    signal: AbortSignal.timeout(ASK_TIMEOUT_MS),
  });
  const body: unknown = await res.json();
  if (!res.ok || !Array.isArray(body) || body.length !== requests.length || !body.every(isAnswer))
    throw new Error(`POST ${serviceUrl}/decide answered HTTP ${res.status} without one decision per route`);
  return body;
}

/**
 * `engine` gives the bundle the service is serving now (undefined until one is loaded); `serviceUrl` is where
 * that service answers POST /decide.
 */
export function accessOfToken(engine: () => unknown, serviceUrl: string): AccessOfToken {
  return async (accessToken) => {
    const live = engine();
    if (!(live instanceof InProcessEngine)) throw new Error("the decision service has no policy loaded yet");
    const { routes, codes } = readCatalog(live);
    const asked = routes.flatMap((route) =>
      (route.methods ?? ["GET"]).map((method) => ({
        method,
        template: route.template,
        paths:
          route.template.includes(CODE) && codes.length > 0
            ? codes.map((code) => samplePath(route.template, { codeOrganisme: code }))
            : [samplePath(route.template)],
      })),
    );
    const requests = asked.flatMap((a) => a.paths.map((path) => ({ method: a.method, path, token: accessToken })));
    const answers: Answer[] = [];
    for (let i = 0; i < requests.length; i += BATCH)
      answers.push(...(await askBatch(serviceUrl, requests.slice(i, i + BATCH))));
    let next = 0;
    return asked.map(({ method, template, paths }) => {
      const tried = paths.map((path) => ({ path, answer: answers[next++]! }));
      const shown =
        tried.find((t) => t.answer.allow) ?? tried.find((t) => t.answer.reason !== "tenant_mismatch") ?? tried[0]!;
      return { method, template, path: shown.path, ...pick(shown.answer) };
    });
  };
}

function pick({ allow, reason, message }: Answer): Pick<RouteAccess, "allow" | "reason" | "message"> {
  return { allow, reason, message };
}
