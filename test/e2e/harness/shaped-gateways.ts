/**
 * Traefik and Envoy are not Debian packages, so the end-to-end tests cannot run them. These stand-ins are
 * node:http proxies on 127.0.0.1 that read the shipped configs (docs/gateways/traefik.yml, envoy.yaml, ports
 * filled in) and build the auth request and the upstream request the way those gateways do, from their
 * sources:
 *   - Traefik forwardAuth (pkg/middlewares/auth/forward.go): a GET to `address` with the client's headers
 *     (only `authRequestHeaders` when set; X-Forwarded-* dropped unless trustForwardHeader), then
 *     X-Forwarded-For/-Method/-Proto/-Port/-Host/-Uri set from the request itself; a non-2xx answer goes to the
 *     client as is; on 2xx, `authResponseHeaders` and every request header matching `authResponseHeadersRegex`
 *     are deleted, then copied from the answer. Header names are Go-canonical (Values kept in order).
 *   - Envoy ext_authz HTTP service (ext_authz_http_impl.cc, check_request_utils.cc): the original method, and
 *     `path_prefix` + the original path; the allowed headers (always Host and Authorization) with repeated
 *     values joined by ","; content-length 0. On 200 the answer's headers matching `allowed_upstream_headers`
 *     replace the request's; otherwise the client gets the status, body and the answer's headers matching
 *     `allowed_client_headers` (plus WWW-Authenticate, Location), a 5xx becoming 403. Header names with "_"
 *     follow `headers_with_underscores_action`.
 */
import { createServer, request, type IncomingMessage, type ServerResponse } from "node:http";
import YAML from "yaml";
import { shippedConfig } from "./gateways.js";
import { listenOnLoopback, LOOPBACK } from "./net.js";
import { at, type DocNode } from "../../support/at.js";

export type ShapedKind = "traefik" | "envoy";

export interface ShapedGateway {
  kind: ShapedKind;
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** A header list in order: [name, value] pairs. */
type Headers = Array<[string, string]>;

interface Answer {
  status: number;
  headers: Headers;
  body: Buffer;
}

const HOP_BY_HOP = [
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
];

function pairs(raw: string[]): Headers {
  const out: Headers = [];
  for (let i = 0; i + 1 < raw.length; i += 2) out.push([raw[i]!, raw[i + 1]!]);
  return out;
}

function forward(port: number, method: string, path: string, headers: Headers): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: LOOPBACK, port, method, path, headers: headers.flat(), agent: false },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: pairs(res.rawHeaders), body: Buffer.concat(chunks) }),
        );
        res.on("error", reject);
      },
    );
    req.setTimeout(5_000, () => req.destroy(new Error(`${method} ${path}: no answer`)));
    req.on("error", reject);
    req.end();
  });
}

function reply(res: ServerResponse, answer: Answer, keep: (name: string) => boolean = () => true): void {
  const headers = answer.headers.filter(
    ([n]) => keep(n.toLowerCase()) && !HOP_BY_HOP.includes(n.toLowerCase()) && n.toLowerCase() !== "content-length",
  );
  res.writeHead(answer.status, [...headers.flat(), "content-length", String(answer.body.length)]);
  res.end(answer.body);
}

/** Go's textproto.CanonicalMIMEHeaderKey: upper case first and after "-", lower case elsewhere. */
export function canonicalGo(name: string): string {
  return name.toLowerCase().replace(/(^|-)([a-z])/g, (_, sep: string, c: string) => sep + c.toUpperCase());
}

/** A Go regexp with a leading (?i) flag, as JavaScript. */
function goRegex(source: string): RegExp {
  return source.startsWith("(?i)") ? new RegExp(source.slice(4), "i") : new RegExp(source);
}

function portOf(url: string): number {
  return Number(new URL(url).port);
}

interface TraefikForwardAuth {
  address: string;
  trustForwardHeader?: boolean;
  authRequestHeaders?: string[];
  authResponseHeaders?: string[];
  authResponseHeadersRegex?: string;
}

const X_FORWARDED = [
  "X-Forwarded-Proto",
  "X-Forwarded-For",
  "X-Forwarded-Host",
  "X-Forwarded-Port",
  "X-Forwarded-Server",
  "X-Forwarded-Uri",
  "X-Forwarded-Method",
  "X-Forwarded-Tls-Client-Cert",
  "X-Forwarded-Tls-Client-Cert-Info",
];

function traefikHandler(config: {
  http: {
    middlewares: Record<string, { forwardAuth?: TraefikForwardAuth }>;
    services: Record<string, { loadBalancer: { servers: Array<{ url: string }> } }>;
  };
}) {
  const fa = Object.values(config.http.middlewares).find((m) => m.forwardAuth)?.forwardAuth;
  const server = Object.values(config.http.services)[0]?.loadBalancer.servers[0]?.url;
  if (!fa || !server) throw new Error("docs/gateways/traefik.yml: no forwardAuth middleware or no service");
  const address = new URL(fa.address);
  const allowed = (fa.authRequestHeaders ?? []).map(canonicalGo);
  const responseNames = (fa.authResponseHeaders ?? []).map(canonicalGo);
  const responseRegex = fa.authResponseHeadersRegex ? goRegex(fa.authResponseHeadersRegex) : undefined;

  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    // The incoming request as Go holds it: canonical names, values in order.
    let client: Headers = pairs(req.rawHeaders).map(([n, v]) => [canonicalGo(n), v]);
    const host = client.find(([n]) => n === "Host")?.[1] ?? "";
    client = client.filter(([n]) => n !== "Host");
    let auth: Headers = client.filter(([n]) => !HOP_BY_HOP.includes(n.toLowerCase()));
    if (!fa.trustForwardHeader) auth = auth.filter(([n]) => !X_FORWARDED.includes(n));
    if (allowed.length > 0) auth = auth.filter(([n]) => allowed.includes(n));
    const set = (name: string, value: string) => {
      auth = auth.filter(([n]) => n !== name);
      auth.push([name, value]);
    };
    set("X-Forwarded-For", req.socket.remoteAddress ?? LOOPBACK);
    set("X-Forwarded-Method", req.method ?? "GET");
    set("X-Forwarded-Proto", "http");
    set("X-Forwarded-Port", host.split(":")[1] ?? "80");
    set("X-Forwarded-Host", host);
    set("X-Forwarded-Uri", req.url ?? "/");
    const answer = await forward(portOf(address.href), "GET", `${address.pathname}${address.search}`, [
      ["Host", address.host],
      ...auth,
    ]);
    if (answer.status < 200 || answer.status >= 300) return reply(res, answer);

    let upstream = client;
    for (const name of responseNames) {
      upstream = upstream.filter(([n]) => n !== name);
      upstream.push(
        ...answer.headers.filter(([n]) => canonicalGo(n) === name).map(([, v]): [string, string] => [name, v]),
      );
    }
    if (responseRegex) {
      upstream = upstream.filter(([n]) => !responseRegex.test(n));
      upstream.push(
        ...answer.headers
          .filter(([n]) => responseRegex.test(canonicalGo(n)))
          .map(([n, v]): [string, string] => [canonicalGo(n), v]),
      );
    }
    reply(res, await forward(portOf(server), req.method ?? "GET", req.url ?? "/", [["Host", host], ...upstream]));
  };
}

interface StringMatcher {
  exact?: string;
  prefix?: string;
  suffix?: string;
  contains?: string;
  ignore_case?: boolean;
}

function matches(patterns: StringMatcher[] | undefined, name: string): boolean {
  return (patterns ?? []).some((p) => {
    const value = p.ignore_case ? name.toLowerCase() : name;
    const norm = (s: string) => (p.ignore_case ? s.toLowerCase() : s);
    if (p.exact !== undefined) return value === norm(p.exact);
    if (p.prefix !== undefined) return value.startsWith(norm(p.prefix));
    if (p.suffix !== undefined) return value.endsWith(norm(p.suffix));
    if (p.contains !== undefined) return value.includes(norm(p.contains));
    return false;
  });
}

interface EnvoyHttpService {
  path_prefix?: string;
  authorization_request?: { allowed_headers?: { patterns?: StringMatcher[] } };
  authorization_response?: {
    allowed_upstream_headers?: { patterns?: StringMatcher[] };
    allowed_client_headers?: { patterns?: StringMatcher[] };
  };
}

function clusterPort(
  clusters: Array<{
    name: string;
    load_assignment: {
      endpoints: Array<{ lb_endpoints: Array<{ endpoint: { address: { socket_address: { port_value: number } } } }> }>;
    };
  }>,
  name: string,
): number {
  const port = clusters.find((c) => c.name === name)?.load_assignment.endpoints[0]?.lb_endpoints[0]?.endpoint.address
    .socket_address.port_value;
  if (port === undefined) throw new Error(`docs/gateways/envoy.yaml: no cluster ${name}`);
  return port;
}

/** The bootstrap read by the shipped file's paths (test/support/at.ts); a missing one throws at start. */
function envoyHandler(config: unknown) {
  const hcm = at(config, "static_resources.listeners.0.filter_chains.0.filters.0.typed_config");
  const protocol = at(hcm, "common_http_protocol_options") as DocNode | undefined;
  const underscores = (protocol?.headers_with_underscores_action as string | undefined) ?? "ALLOW";
  const extAuthz = at(
    (at(hcm, "http_filters") as DocNode[]).find((f) => f.name === "envoy.filters.http.ext_authz"),
    "typed_config",
  );
  const http = at(extAuthz, "http_service") as EnvoyHttpService;
  const clusters = at(config, "static_resources.clusters") as Parameters<typeof clusterPort>[0];
  const authPort = clusterPort(clusters, at(http, "server_uri.cluster") as string);
  const route = at(hcm, "route_config.virtual_hosts.0.routes.0.route.cluster") as string;
  const upstreamPort = clusterPort(clusters, route);
  // Always sent to an HTTP authorization service, whatever allowed_headers says.
  const always: StringMatcher[] = [{ exact: "host" }, { exact: "authorization" }];
  const requestPatterns = [...always, ...(http.authorization_request?.allowed_headers?.patterns ?? [])];
  const clientPatterns = http.authorization_response?.allowed_client_headers?.patterns;

  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    let client: Headers = pairs(req.rawHeaders).map(([n, v]) => [n.toLowerCase(), v]);
    if (client.some(([n]) => n.includes("_"))) {
      if (underscores === "REJECT_REQUEST")
        return reply(res, { status: 400, headers: [], body: Buffer.from("Bad Request") });
      if (underscores === "DROP_HEADER") client = client.filter(([n]) => !n.includes("_"));
    }
    const joined = new Map<string, string>();
    for (const [n, v] of client)
      if (matches(requestPatterns, n)) joined.set(n, joined.has(n) ? `${joined.get(n)},${v}` : v);
    const check: Headers = [...joined.entries(), ["content-length", "0"]];
    const answer = await forward(authPort, req.method ?? "GET", `${http.path_prefix ?? ""}${req.url ?? "/"}`, check);
    if (answer.status !== 200) {
      const denied = answer.status >= 500 ? { status: 403, headers: [], body: Buffer.alloc(0) } : answer;
      const allowedToClient = (n: string) =>
        clientPatterns ? matches(clientPatterns, n) || ["www-authenticate", "location"].includes(n) : n !== "host";
      return reply(res, denied, allowedToClient);
    }
    let upstream = client;
    for (const [n, v] of answer.headers) {
      const name = n.toLowerCase();
      if (!matches(http.authorization_response?.allowed_upstream_headers?.patterns, name)) continue;
      upstream = upstream.filter(([m]) => m !== name);
      upstream.push([name, v]);
    }
    reply(res, await forward(upstreamPort, req.method ?? "GET", req.url ?? "/", upstream));
  };
}

/** Starts the stand-in for `kind` on a free loopback port, configured by the shipped file with ports filled in. */
export async function startShapedGateway(
  kind: ShapedKind,
  opts: { authPort: number; upstreamPort: number },
): Promise<ShapedGateway> {
  const file = kind === "traefik" ? "traefik.yml" : "envoy.yaml";
  const config: unknown = YAML.parse(
    shippedConfig(file, { port: 0, authPort: opts.authPort, upstreamPort: opts.upstreamPort }),
  );
  const handle =
    kind === "traefik" ? traefikHandler(config as Parameters<typeof traefikHandler>[0]) : envoyHandler(config);
  const server = createServer((req, res) => {
    req.resume();
    handle(req, res).catch((err: Error) => {
      // Both gateways answer a failed auth call with an error status, never a pass.
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" }).end(err.message);
    });
  });
  const { port, close } = await listenOnLoopback(server);
  return { kind, url: `http://${LOOPBACK}:${port}`, port, stop: close };
}
