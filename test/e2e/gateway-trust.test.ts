/**
 * Gateway-safe decisions (issue 9) through real nginx and caddy running the shipped configs of docs/gateways/,
 * and through stand-ins that shape Traefik's and Envoy's requests from their shipped configs (not installable
 * here: harness/shaped-gateways.ts):
 * a client's X-Original-* / X-Forwarded-Method/-Uri headers never decide (item 1), a client's X-Portier-*
 * headers in any spelling never reach the upstream (item 4), two Authorization headers are refused (item 5),
 * nginx logs the decision id and reason (item 6), raw UTF-8 request targets are judged as UTF-8 (item 7).
 * Each case checks the status the client gets and whether (and with what) the upstream was reached.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { INSTALL_HINT, SHIPPED_DIR, findBinary, startGateway, type GatewayKind } from "./harness/gateways.js";
import { send, sendBytes, type RawResponse } from "./harness/http.js";
import { startIssuerProcess, startServiceProcess, type RunningPortier } from "./harness/portier.js";
import { MACHINE_CLIENT, machineToken, userToken } from "./harness/tokens.js";
import { startRawUpstream, startUpstream, type RunningRawUpstream, type RunningUpstream } from "./harness/upstream.js";
import { startShapedGateway, type ShapedKind } from "./harness/shaped-gateways.js";
import { PORTIER_HEADERS } from "../../src/service/gateway/answer.js";
import { until } from "../support/until.js";

type Kind = GatewayKind | ShapedKind;
const KINDS: Kind[] = ["nginx", "caddy", "traefik", "envoy"];

interface Front {
  url: string;
  stop(): Promise<void>;
  logs?(): string;
  dir?: string;
}

function isReal(kind: Kind): kind is GatewayKind {
  return kind === "nginx" || kind === "caddy";
}

function startFront(kind: Kind, upstreamPort: number): Promise<Front> {
  const opts = { authPort: service!.port, upstreamPort };
  return isReal(kind) ? startGateway(kind, opts) : startShapedGateway(kind, opts);
}

const CONFIG_FILE: Record<Kind, string> = {
  nginx: "nginx.conf",
  caddy: "Caddyfile",
  traefik: "traefik.yml",
  envoy: "envoy.yaml",
};

let issuer: RunningPortier | undefined;
let service: RunningPortier | undefined;
let upstream: RunningUpstream;
/** synced.sans.role: allowed on "all synced" routes (/v2/ORG001/centres), refused on role-listed ones. */
let synced: string;
/** enseignant.jeune, tenant A (ORG001). */
let teacher: string;
let machine: string;

interface Forgery {
  why: string;
  caller: () => string;
  method: string;
  /** What the upstream would serve. */
  path: string;
  /** The headers a client adds to make Portier judge something else. */
  forged: Record<string, string>;
  /** Portier's reason for the real request. */
  reason: string;
}

const FORGERIES: Forgery[] = [
  {
    why: "a route the caller may not call, as one it may",
    caller: () => synced,
    method: "GET",
    path: "/v2/ORG001/elevesJeunes/E42/absences",
    forged: { "X-Original-URI": "/v2/ORG001/centres", "X-Original-Method": "GET" },
    reason: "role_not_allowed",
  },
  {
    why: "a DELETE presented as a GET",
    caller: () => machine,
    method: "DELETE",
    path: "/v2/ORG001/centres",
    forged: { "X-Original-Method": "GET" },
    reason: "method_not_allowed",
  },
  {
    why: "another tenant's organisation as the caller's",
    caller: () => teacher,
    method: "GET",
    path: "/v2/ORG002/elevesJeunes",
    forged: { "X-Original-URI": "/v2/ORG001/elevesJeunes" },
    reason: "tenant_mismatch",
  },
  {
    why: "the route forgery, Traefik/Caddy family",
    caller: () => synced,
    method: "GET",
    path: "/v2/ORG001/elevesJeunes/E42/absences",
    forged: { "X-Forwarded-Uri": "/v2/ORG001/centres", "X-Forwarded-Method": "GET" },
    reason: "role_not_allowed",
  },
  {
    why: "the DELETE forgery, Traefik/Caddy family",
    caller: () => machine,
    method: "DELETE",
    path: "/v2/ORG001/centres",
    forged: { "X-Forwarded-Method": "GET" },
    reason: "method_not_allowed",
  },
];

/** Spellings of X-Portier-* headers a client may send; none may reach the upstream as sent. */
const FORGED_PORTIER = [
  "X-Portier-Client-Id",
  "forged-client",
  "X-Portier-Flow",
  "accessCode",
  "X-Portier-Reason",
  "forged-reason",
  "X-Portier-Subject",
  "forged-subject",
  "X_Portier_Subject",
  "forged-subject",
  "X-Portier_Tenant",
  "forged-tenant",
  "x_portier-roles",
  "directeur_jeune",
  "X_PORTIER_DECISION_ID",
  "forged-decision",
];

function shown(res: RawResponse, gateway: Front): string {
  return (
    `status ${res.status}, headers ${JSON.stringify(res.headers)}, ` +
    `body ${res.body.slice(0, 300)}\n${res.status >= 500 ? (gateway.logs?.() ?? "") : ""}`
  );
}

beforeAll(async () => {
  upstream = await startUpstream();
  issuer = await startIssuerProcess();
  service = await startServiceProcess(issuer.url);
  machine = await machineToken(issuer.url);
  synced = (await userToken(issuer.url, "synced.sans.role")).accessToken;
  teacher = (await userToken(issuer.url, "enseignant.jeune")).accessToken;
}, 120_000);

afterAll(async () => {
  await service?.stop();
  await issuer?.stop();
  await upstream?.close();
});

describe("the shipped nginx and Caddy configs", () => {
  it("copy every X-Portier-* header Portier sets", () => {
    const nginx = readFileSync(join(SHIPPED_DIR, "nginx.conf"), "utf8");
    const caddy = readFileSync(join(SHIPPED_DIR, "Caddyfile"), "utf8");
    for (const name of PORTIER_HEADERS) {
      const variable = name.toLowerCase().replace(/-/g, "_").replace(/^x_/, "");
      expect(nginx, name).toContain(`auth_request_set $${variable} $upstream_http_x_${variable};`);
      expect(nginx, name).toContain(`proxy_set_header ${name} $${variable};`);
      expect(caddy.match(/^\s*copy_headers (.*)$/m)?.[1]?.split(/\s+/), name).toContain(name);
    }
  });
});

for (const kind of KINDS) {
  const missing = isReal(kind) && findBinary(kind) === undefined;
  if (isReal(kind) && missing)
    console.warn(`[e2e] ${kind} not found: skipping the ${kind} gateway-trust tests. Install: ${INSTALL_HINT[kind]}`);
  const how = isReal(kind) ? `through ${kind}` : `through requests shaped as ${kind} sends them`;

  describe.skipIf(missing)(`${how}, with docs/gateways/${CONFIG_FILE[kind]}`, () => {
    let gateway: Front;
    beforeAll(async () => {
      gateway = await startFront(kind, upstream.port);
    });
    afterAll(async () => {
      await gateway?.stop();
    });

    it.each(FORGERIES)(
      "item 1: forged $forged on $method $path is judged on the real request ($why)",
      async ({ caller, method, path, forged, reason }) => {
        upstream.seen.length = 0;
        const res = await send(gateway.url, path, {
          method,
          headers: { authorization: `Bearer ${caller()}`, ...forged },
        });
        expect(res.status, shown(res, gateway)).toBe(403);
        expect(upstream.seen, "the upstream must not be reached").toHaveLength(0);
        // Caddy, Traefik and Envoy (allowed_client_headers) hand the client Portier's reason; nginx keeps only the
        // status.
        if (kind !== "nginx") expect(res.headers["x-portier-reason"], shown(res, gateway)).toBe(reason);
      },
    );

    it(
      "item 1: without a forgery the caller is allowed on " + "the route it forged (the cases above are not vacuous)",
      async () => {
        upstream.seen.length = 0;
        const res = await send(gateway.url, "/v2/ORG001/centres", { headers: { authorization: `Bearer ${synced}` } });
        expect(res.status, shown(res, gateway)).toBe(200);
        expect(upstream.seen).toHaveLength(1);
      },
    );

    it("item 4: X-Portier-* headers a client sends, in any spelling, are replaced by Portier's own", async () => {
      upstream.seen.length = 0;
      const res = await send(gateway.url, "/v2/ORG001/centres", {
        headers: ["Authorization", `Bearer ${machine}`, ...FORGED_PORTIER],
      });
      expect(res.status, shown(res, gateway)).toBe(200);
      expect(upstream.seen).toHaveLength(1);
      const received = upstream.seen[0]!.portier;
      // Only Portier's own names, with Portier's values; no other spelling gets through.
      for (const name of Object.keys(received))
        expect(
          PORTIER_HEADERS.map((h) => h.toLowerCase()),
          JSON.stringify(received),
        ).toContain(name);
      expect(received).toMatchObject({
        "x-portier-subject": MACHINE_CLIENT,
        "x-portier-client-id": MACHINE_CLIENT,
        "x-portier-flow": "application",
        "x-portier-reason": "allowed",
      });
      expect(received["x-portier-decision-id"]).toMatch(/^[0-9a-f-]{36}$/);
      expect(received["x-portier-roles"] ?? "").toBe("");
    });

    it.each([
      { order: "the valid token first", first: () => teacher, second: () => "not-a-jwt" },
      { order: "the valid token second", first: () => "not-a-jwt", second: () => teacher },
      { order: "two valid tokens of different callers", first: () => teacher, second: () => machine },
    ])("item 5: two Authorization headers are refused ($order)", async ({ first, second }) => {
      upstream.seen.length = 0;
      const res = await send(gateway.url, "/v2/ORG001/elevesJeunes", {
        headers: ["Authorization", `Bearer ${first()}`, "Authorization", `Bearer ${second()}`],
      });
      expect(upstream.seen, "the upstream must not be reached").toHaveLength(0);
      if (kind === "nginx") {
        // nginx refuses a duplicate Authorization line itself, before auth_request.
        expect(res.status, shown(res, gateway)).toBe(400);
      } else {
        // Caddy and Traefik pass both on (Envoy joins them with ","): Portier refuses them.
        expect(res.status, shown(res, gateway)).toBe(401);
        expect(res.headers["www-authenticate"], shown(res, gateway)).toMatch(
          /^Bearer error="invalid_token", error_description="token_malformed/,
        );
      }
    });

    // node:http, on which the stand-ins run, refuses raw UTF-8 request targets: real gateways only.
    if (isReal(kind))
      describe("item 7: a raw UTF-8 request target is judged as UTF-8", () => {
        // node:http refuses raw UTF-8 targets, which nginx passes upstream as received: a bare-socket upstream.
        let raw: RunningRawUpstream;
        let rawGateway: Front;
        beforeAll(async () => {
          raw = await startRawUpstream();
          rawGateway = await startFront(kind, raw.port);
        });
        afterAll(async () => {
          await rawGateway?.stop();
          await raw?.close();
        });

        it.each([
          {
            path: "/v2/ORG001/écoles",
            encoding: "utf8" as const,
            status: 200,
            why: "raw UTF-8 é, an 'all synced' route",
          },
          { path: "/v2/ORG001/bâtiments", encoding: "utf8" as const, status: 200, why: "raw UTF-8 â" },
          {
            path: "/v2/ORG001/écoles",
            encoding: "latin1" as const,
            status: 403,
            why: "the latin1 byte of é: not UTF-8 (path_invalid)",
          },
        ])("$why", async ({ path, encoding, status }) => {
          raw.seen.length = 0;
          const head = Buffer.concat([
            Buffer.from("GET "),
            Buffer.from(path, encoding),
            Buffer.from(` HTTP/1.1\r\nHost: ${new URL(rawGateway.url).host}\r\nAuthorization: Bearer ${synced}`),
          ]);
          const res = await sendBytes(rawGateway.url, head);
          expect(res.status, shown(res, rawGateway)).toBe(status);
          expect(raw.seen).toHaveLength(status === 200 ? 1 : 0);
          if (status === 200) {
            // nginx passes the bytes as received, Caddy percent-encodes them: the same path either way.
            const target = raw.seen[0]!.target;
            const bytes = Buffer.from(
              target.replace(/%([0-9A-F]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
              "latin1",
            );
            expect(bytes.toString("utf8"), target).toBe(path);
            expect(raw.seen[0]!.portier["x-portier-reason"]).toBe("allowed");
          }
          if (kind === "caddy" && status === 403) expect(res.headers["x-portier-reason"]).toBe("path_invalid");
        });
      });

    if (kind === "caddy") {
      // Issue 17 item 3: /forward-auth/caddy requires X-Forwarded-Host (403 request_invalid without it). Seen
      // through caddy 2.6: forward_auth always sets it to the client's Host, replacing a client's X-Forwarded-Host,
      // and passes X_Forwarded_Host on as another header; a request without a Host never reaches forward_auth.
      it.each([
        {
          why: "a forged X-Forwarded-Host, allowed route",
          path: "/v2/ORG001/centres",
          forged: ["X-Forwarded-Host", "evil.example"],
          status: 200,
        },
        {
          why: "a forged X_Forwarded_Host, allowed route",
          path: "/v2/ORG001/centres",
          forged: ["X_Forwarded_Host", "evil.example"],
          status: 200,
        },
        {
          why: "both spellings forged, refused route",
          path: "/v2/ORG001/elevesJeunes",
          forged: ["X-Forwarded-Host", "evil.example", "X_Forwarded_Host", "evil.example"],
          status: 403,
        },
      ])(
        "item 3 (issue 17): $why is replaced by Caddy's own host and judged on the real request",
        async ({ path, forged, status }) => {
          upstream.seen.length = 0;
          const res = await send(gateway.url, path, { headers: ["Authorization", `Bearer ${synced}`, ...forged] });
          // Had Caddy passed the client's X-Forwarded-Host beside its own, Portier would refuse two (403
          // request_invalid).
          expect(res.status, shown(res, gateway)).toBe(status);
          expect(upstream.seen).toHaveLength(status === 200 ? 1 : 0);
          if (status === 200) expect(upstream.seen[0]!.portier["x-portier-reason"]).toBe("allowed");
          else expect(res.headers["x-portier-reason"], shown(res, gateway)).toBe("role_not_allowed");
        },
      );

      it.each([
        {
          why: "HTTP/1.0 without Host",
          head: (path: string) => `GET ${path} HTTP/1.0\r\nAuthorization: Bearer ${synced}`,
        },
        {
          why: "an empty Host",
          head: (path: string) => `GET ${path} HTTP/1.1\r\nHost: \r\nAuthorization: Bearer ${synced}`,
        },
      ])("item 3 (issue 17): a request with $why never reaches the upstream", async ({ head }) => {
        upstream.seen.length = 0;
        const res = await sendBytes(gateway.url, Buffer.from(head("/v2/ORG001/centres")));
        expect(res.headers["x-upstream"], shown(res, gateway)).toBeUndefined();
        expect(res.headers["x-portier-reason"], shown(res, gateway)).not.toBe("allowed");
        expect(upstream.seen, "the upstream must not be reached").toHaveLength(0);
      });
    }

    if (kind === "nginx") {
      it("item 6: the access log names Portier's decision id and reason, for allows and denies", async () => {
        const logFile = join(gateway.dir!, "portier.log");
        const readLog = () => (existsSync(logFile) ? readFileSync(logFile, "utf8").trim().split("\n") : []);
        const lines = (log: string[], request: string) => log.filter((l) => l.includes(`"${request} HTTP/1.1"`));
        const before = readLog();
        const countsBefore = [
          lines(before, "GET /v2/ORG001/centres").length,
          lines(before, "GET /v2/ORG001/elevesJeunes").length,
        ];
        upstream.seen.length = 0;
        const allowed = await send(gateway.url, "/v2/ORG001/centres", {
          headers: { authorization: `Bearer ${synced}` },
        });
        expect(allowed.status).toBe(200);
        const id = upstream.seen[0]!.portier["x-portier-decision-id"];
        const denied = await send(gateway.url, "/v2/ORG001/elevesJeunes", {
          headers: { authorization: `Bearer ${synced}` },
        });
        expect(denied.status).toBe(403);
        // nginx writes a request's access-log line in its log phase, after the client has the answer: wait for both.
        let log: string[] = [];
        await until(() => {
          log = readLog();
          return (
            lines(log, "GET /v2/ORG001/centres").length > countsBefore[0]! &&
            lines(log, "GET /v2/ORG001/elevesJeunes").length > countsBefore[1]!
          );
        });
        const last = (request: string) => lines(log, request).pop();
        expect(last("GET /v2/ORG001/centres"), log.join("\n")).toContain(`decision_id=${id} reason=allowed`);
        expect(last("GET /v2/ORG001/elevesJeunes"), log.join("\n")).toMatch(
          / 403 decision_id=[0-9a-f-]{36} reason=role_not_allowed$/,
        );
      });
    }
  });
}
