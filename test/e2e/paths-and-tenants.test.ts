/**
 * Issue 9, items 2 and 8, through real nginx and caddy: Portier must judge exactly the path the upstream
 * receives, and every spelling an upstream may take for the same organisation must be the same code or
 * be refused. Each request-target is written byte for byte on the socket (raw "#", spaces, raw bytes,
 * ";" path parameters, look-alike codes). For every case: the status the client gets through each
 * gateway, Portier's reason (asked directly with nginx-style headers, and as caddy passes it on), and
 * whether the upstream was reached. For every request that did reach the upstream, the path it received,
 * read the way a Go net/http server (no fragment cut, decode, clean "..") and a servlet container (strip
 * ";params") read it, must be the path Portier judged and allowed (from its decision log, by decision id).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeThroughGateways } from "./harness/describe-gateways.js";
import { type RunningGateway } from "./harness/gateways.js";
import { bearer, send, sendBytes, type RawResponse } from "./harness/http.js";
import { startIssuerProcess, startServiceProcess, type RunningPortier } from "./harness/portier.js";
import { TENANT_A, machineToken } from "./harness/tokens.js";
import { startUpstream, type RunningUpstream } from "./harness/upstream.js";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import type { DecideJson } from "../support/answers.js";

/** A machine client of a tenant that data/tenants.json does not list, added to the issuer's clients. */
const UNLISTED = {
  client_id: "portier-e2e-machine-unlisted",
  secret: "portier-e2e-unlisted-secret",
  tenant_id: "0b6f4c1e-2d3a-4e5f-8a9b-0c1d2e3f4a5b",
};

type Caller = "tenantA" | "unlisted";
type Outcome = { status: 200 } | { status: 403; reason: string } | { status: 400; by: "gateway" };

interface Case {
  why: string;
  caller: Caller;
  /** The request-target as written on the wire (a string is sent as Latin-1 bytes, a Buffer as is). */
  target: string | Buffer;
  /** What the client gets through each gateway (and, for a 403, the reason Portier gives). */
  nginx: Outcome;
  caddy: Outcome;
}

const allowed: Outcome = { status: 200 };
const refused = (reason: string): Outcome => ({ status: 403, reason });
const pathInvalid = refused("path_invalid");
const gatewayRefuses: Outcome = { status: 400, by: "gateway" };
const utf8 = (s: string) => Buffer.from(s, "utf8");

/** Item 2: a request-target that is not origin-form, and the other spellings upstreams read differently. */
const TARGETS: Case[] = [
  {
    why: "the issue's example: raw # then dot segments (Go keeps # in the path, cleans .., serves admin/secret.txt)",
    caller: "tenantA",
    target: "/v1/roles#/../../admin/secret.txt",
    nginx: pathInvalid,
    caddy: pathInvalid,
  },
  {
    why: "a raw # with a plain fragment",
    caller: "tenantA",
    target: "/v1/roles#frag",
    nginx: pathInvalid,
    caddy: pathInvalid,
  },
  {
    why: "a raw # inside the query",
    caller: "tenantA",
    target: "/v1/roles?a=1#/../../admin",
    nginx: pathInvalid,
    caddy: pathInvalid,
  },
  {
    why: "an encoded # then dot segments",
    caller: "tenantA",
    target: "/v1/roles%23/../../admin/secret.txt",
    nginx: pathInvalid,
    caddy: pathInvalid,
  },
  {
    why: "raw { } outside pchar (caddy percent-encodes them, the same bytes reach Portier and upstream)",
    caller: "tenantA",
    target: "/v2/ORG001/elevesJeunes/{x}",
    nginx: pathInvalid,
    caddy: allowed,
  },
  {
    why: "raw < > outside pchar",
    caller: "tenantA",
    target: "/v2/ORG001/elevesJeunes/<x>",
    nginx: pathInvalid,
    caddy: allowed,
  },
  {
    why: 'raw | ^ ` " outside pchar',
    caller: "tenantA",
    target: '/v2/ORG001/elevesJeunes/a|b^c`d"e',
    nginx: pathInvalid,
    caddy: allowed,
  },
  {
    why: "raw [ ] outside pchar (caddy passes them raw)",
    caller: "tenantA",
    target: "/v2/ORG001/elevesJeunes/[x]",
    nginx: pathInvalid,
    caddy: pathInvalid,
  },
  {
    why: "raw [ ] in the query",
    caller: "tenantA",
    target: "/v2/ORG001/elevesJeunes?filtre[nom]=x",
    nginx: pathInvalid,
    caddy: pathInvalid,
  },
  {
    why: "a raw backslash (caddy encodes it: an encoded backslash)",
    caller: "tenantA",
    target: "/v2/ORG001\\..\\ORG002/centres",
    nginx: pathInvalid,
    caddy: pathInvalid,
  },
  {
    why: "raw invalid UTF-8 byte",
    caller: "tenantA",
    target: Buffer.from([...Buffer.from("/v2/ORG001/elevesJeunes/"), 0xff]),
    nginx: pathInvalid,
    caddy: pathInvalid,
  },
  {
    why: "a ;jsessionid path parameter (Tomcat and Spring strip it)",
    caller: "tenantA",
    target: "/v2/ORG001/elevesJeunes/E1;jsessionid=x",
    nginx: pathInvalid,
    caddy: pathInvalid,
  },
  {
    why: "the ..; traversal of servlet containers",
    caller: "tenantA",
    target: "/v2/ORG001/..;/ORG002/centres",
    nginx: pathInvalid,
    caddy: pathInvalid,
  },
  {
    why: "an encoded %25 (an upstream decoding twice would see %2F)",
    caller: "tenantA",
    target: "/v2/ORG001/elevesJeunes/a%252F..%252Fb",
    nginx: pathInvalid,
    caddy: pathInvalid,
  },
  {
    why: "an encoded ?",
    caller: "tenantA",
    target: "/v2/ORG001/elevesJeunes/E1%3Fx",
    nginx: pathInvalid,
    caddy: pathInvalid,
  },
  {
    why: "asterisk-form (nginx refuses it itself)",
    caller: "tenantA",
    target: "*",
    nginx: gatewayRefuses,
    caddy: pathInvalid,
  },
  {
    why: "a raw space (both gateways refuse it)",
    caller: "tenantA",
    target: "/v1/ro les",
    nginx: gatewayRefuses,
    caddy: gatewayRefuses,
  },
  {
    why: "a raw tab (both gateways refuse it)",
    caller: "tenantA",
    target: "/v1/ro\tles",
    nginx: gatewayRefuses,
    caddy: gatewayRefuses,
  },
  {
    why: "a malformed escape (both gateways refuse it)",
    caller: "tenantA",
    target: "/v1/roles%zz",
    nginx: gatewayRefuses,
    caddy: gatewayRefuses,
  },
  {
    why: "a plain request still passes",
    caller: "tenantA",
    target: "/v1/roles?x=1&y=/a?b",
    nginx: allowed,
    caddy: allowed,
  },
  {
    why: "percent-encoded UTF-8 still passes",
    caller: "tenantA",
    target: "/v2/ORG001/%C3%A9coles",
    nginx: allowed,
    caddy: allowed,
  },
];

/** Item 8: a caller of an unlisted tenant on ORG002 (listed under tenant B), spelled every way. */
const TENANTS: Case[] = [
  {
    why: "the listed code as listed",
    caller: "unlisted",
    target: "/v2/ORG002/centres",
    nginx: refused("tenant_mismatch"),
    caddy: refused("tenant_mismatch"),
  },
  {
    why: "lower case",
    caller: "unlisted",
    target: "/v2/org002/centres",
    nginx: refused("tenant_mismatch"),
    caddy: refused("tenant_mismatch"),
  },
  {
    why: "mixed case",
    caller: "unlisted",
    target: "/v2/oRg002/centres",
    nginx: refused("tenant_mismatch"),
    caddy: refused("tenant_mismatch"),
  },
  {
    why: "a percent-encoded letter",
    caller: "unlisted",
    target: "/v2/%4FRG002/centres",
    nginx: refused("tenant_mismatch"),
    caddy: refused("tenant_mismatch"),
  },
  { why: "a trailing dot", caller: "unlisted", target: "/v2/ORG002./centres", nginx: pathInvalid, caddy: pathInvalid },
  {
    why: "an encoded trailing dot",
    caller: "unlisted",
    target: "/v2/ORG002%2E/centres",
    nginx: pathInvalid,
    caddy: pathInvalid,
  },
  {
    why: "a ;x path parameter",
    caller: "unlisted",
    target: "/v2/ORG002;x/centres",
    nginx: pathInvalid,
    caddy: pathInvalid,
  },
  {
    why: "an encoded ;x",
    caller: "unlisted",
    target: "/v2/ORG002%3Bx/centres",
    nginx: pathInvalid,
    caddy: pathInvalid,
  },
  {
    why: "a fullwidth O, percent-encoded",
    caller: "unlisted",
    target: "/v2/%EF%BC%AFRG002/centres",
    nginx: pathInvalid,
    caddy: pathInvalid,
  },
  {
    why: "a fullwidth O, raw UTF-8 (read as its escapes)",
    caller: "unlisted",
    target: utf8("/v2/ＯRG002/centres"),
    nginx: pathInvalid,
    caddy: pathInvalid,
  },
  {
    why: "fullwidth digits",
    caller: "unlisted",
    target: "/v2/ORG%EF%BC%90%EF%BC%90%EF%BC%92/centres",
    nginx: pathInvalid,
    caddy: pathInvalid,
  },
  {
    why: "a trailing encoded space",
    caller: "unlisted",
    target: "/v2/ORG002%20/centres",
    nginx: pathInvalid,
    caddy: pathInvalid,
  },
  {
    why: "a zero-width space inside",
    caller: "unlisted",
    target: "/v2/ORG0%E2%80%8B02/centres",
    nginx: pathInvalid,
    caddy: pathInvalid,
  },
  {
    why: "a code outside the code alphabet (dotless i)",
    caller: "unlisted",
    target: "/v2/ORG%C4%B1/centres",
    nginx: pathInvalid,
    caddy: pathInvalid,
  },
  {
    why: "an unlisted code is still open to an unlisted tenant",
    caller: "unlisted",
    target: "/v2/ORG999/centres",
    nginx: allowed,
    caddy: allowed,
  },
  {
    why: "tenant A on its own code in lower case",
    caller: "tenantA",
    target: "/v2/org001/centres",
    nginx: allowed,
    caddy: allowed,
  },
  {
    why: "tenant A on ORG002 in lower case",
    caller: "tenantA",
    target: "/v2/org002/centres",
    nginx: refused("tenant_mismatch"),
    caddy: refused("tenant_mismatch"),
  },
];

const ALL = [...TARGETS, ...TENANTS];

/** Go net/http + ServeMux: the path is everything before "?" (a "#" is kept), unescaped, then cleaned. */
function goServedPath(received: string): string | undefined {
  const raw = received.split("?")[0] as string;
  const bytes: number[] = [];
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] === "%") {
      const byte = Number.parseInt(raw.slice(i + 1, i + 3), 16);
      if (!/^[0-9A-Fa-f]{2}$/.test(raw.slice(i + 1, i + 3))) return undefined; // Go answers 400
      bytes.push(byte);
      i += 2;
    } else bytes.push(...Buffer.from(raw[i] as string, "latin1"));
  }
  return cleanPath(Buffer.from(bytes).toString("utf8"));
}

/** A servlet container: ";params" stripped from every segment before decoding, then cleaned. */
function servletServedPath(received: string): string | undefined {
  const raw = (received.split("?")[0] as string)
    .split("/")
    .map((segment) => segment.split(";")[0])
    .join("/");
  return goServedPath(raw);
}

/** path.Clean as ServeMux applies it: "." and ".." resolved, empty segments dropped, a trailing slash kept. */
function cleanPath(path: string): string {
  const out: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") out.pop();
    else out.push(segment);
  }
  const cleaned = `/${out.join("/")}`;
  return path.endsWith("/") && cleaned !== "/" ? `${cleaned}/` : cleaned;
}

let issuer: RunningPortier | undefined;
let service: RunningPortier | undefined;
let upstream: RunningUpstream;
let scratch: string;
const tokens = new Map<Caller, string>();

function findDecision(decisionId: string): { allow: boolean; path: string | null } | undefined {
  for (const line of (service?.proc.output() ?? "").split("\n")) {
    if (!line.includes(decisionId)) continue;
    try {
      const record = JSON.parse(line) as { event?: string; decision_id?: string; allow: boolean; path: string | null };
      if (record.event === "decision" && record.decision_id === decisionId) return record;
    } catch {
      // not a JSON line
    }
  }
  return undefined;
}

/** The decision log line of one decision id; the log is written asynchronously, so wait for it (bounded). */
async function decisionLogged(decisionId: string): Promise<{ allow: boolean; path: string | null } | undefined> {
  for (let waited = 0; waited < 3_000; waited += 50) {
    const found = findDecision(decisionId);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 50));
  }
  return undefined;
}

/** Sends the request-target byte for byte through the gateway (the harness's raw sender). */
function sendThrough(gateway: RunningGateway, target: string | Buffer, token: string): Promise<RawResponse> {
  const bytes = typeof target === "string" ? Buffer.from(target, "latin1") : target;
  const head = Buffer.concat([
    Buffer.from("GET "),
    bytes,
    Buffer.from(` HTTP/1.1\r\nHost: ${new URL(gateway.url).host}\r\nAuthorization: Bearer ${token}`),
  ]);
  return sendBytes(gateway.url, head);
}

function describeResponse(res: RawResponse, gateway?: RunningGateway): string {
  return (
    `status ${res.status}, headers ${JSON.stringify(res.headers)}, body ${res.body.slice(0, 300)}` +
    `\nupstream saw ${JSON.stringify(upstream.seen)}` +
    (gateway ? `\n${gateway.logs().slice(-1500)}` : "")
  );
}

describe("paths and tenant codes through real gateways (issue 9, items 2 and 8)", () => {
  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), "portier-e2e-paths-"));
    const clients = JSON.parse(readFileSync(join(PROJECT_ROOT, "data", "sample", "clients.json"), "utf8")) as {
      clients: object[];
    };
    clients.clients.push({
      client_id: UNLISTED.client_id,
      client_name: "e2e machine client of a tenant data/tenants.json does not list",
      type: "confidential",
      client_secret: UNLISTED.secret,
      grant_types: ["client_credentials"],
      scopes: ["apiclients"],
      tenant_id: UNLISTED.tenant_id,
    });
    const clientsFile = join(scratch, "clients.json");
    writeFileSync(clientsFile, JSON.stringify(clients));
    upstream = await startUpstream();
    issuer = await startIssuerProcess(["--clients", clientsFile]);
    service = await startServiceProcess(issuer.url);
    tokens.set("tenantA", await machineToken(issuer.url));
    tokens.set("unlisted", await machineToken(issuer.url, UNLISTED.client_id, UNLISTED.secret));
  }, 120_000);

  afterAll(async () => {
    await service?.stop();
    await issuer?.stop();
    await upstream?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it("the two callers are of tenant A and of an unlisted tenant", async () => {
    const a = await send(service!.url, "/decide", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ method: "GET", path: "/v1/roles", token: tokens.get("tenantA") }),
    });
    const z = await send(service!.url, "/decide", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ method: "GET", path: "/v1/roles", token: tokens.get("unlisted") }),
    });
    expect((JSON.parse(a.body) as DecideJson).subject?.tenant_id).toBe(TENANT_A);
    expect((JSON.parse(z.body) as DecideJson).subject?.tenant_id).toBe(UNLISTED.tenant_id);
  });

  describe(
    "asked directly, as nginx asks /forward-auth/nginx " + "(X-Original-URI is the request-target byte for byte)",
    () => {
      // node:http sends header values as Latin-1: raw UTF-8 bytes arrive exactly as nginx would pass them.
      const asked = ALL.filter((c) => c.nginx.status !== 400);
      it.each(asked)("$caller $target: $why", async (c) => {
        const uri = typeof c.target === "string" ? c.target : c.target.toString("latin1");
        const res = await send(service!.url, "/forward-auth/nginx", {
          headers: { ...bearer(tokens.get(c.caller)!), "x-original-method": "GET", "x-original-uri": uri },
        });
        expect(res.status, describeResponse(res)).toBe(c.nginx.status);
        if (c.nginx.status === 403) expect(res.headers["x-portier-reason"], describeResponse(res)).toBe(c.nginx.reason);
      });
    },
  );

  describeThroughGateways(
    (kind) => `through ${kind}`,
    () => ({ authPort: service!.port, upstreamPort: upstream.port }),
    (kind, gateway) => {
      it.each(ALL)("$caller $target: $why", async (c) => {
        const expected = c[kind];
        upstream.seen.length = 0;
        const res = await sendThrough(gateway(), c.target, tokens.get(c.caller)!);
        expect(res.status, describeResponse(res, gateway())).toBe(expected.status);
        if (expected.status !== 200) {
          expect(upstream.seen, "a refused request must not reach the upstream").toHaveLength(0);
          // Caddy hands the client Portier's deny answer; nginx keeps only the status.
          if (kind === "caddy" && expected.status === 403)
            expect(res.headers["x-portier-reason"], describeResponse(res)).toBe(expected.reason);
          return;
        }
        expect(upstream.seen, describeResponse(res, gateway())).toHaveLength(1);
      });

      it("every request that reached the upstream was judged on the very path the upstream serves", async () => {
        const reached: Array<{
          target: string;
          received: string;
          judged: string | null | undefined;
          allow: boolean | undefined;
        }> = [];
        for (const c of ALL) {
          upstream.seen.length = 0;
          await sendThrough(gateway(), c.target, tokens.get(c.caller)!);
          for (const seen of upstream.seen) {
            const logged = await decisionLogged(seen.portier["x-portier-decision-id"] ?? "(none)");
            reached.push({ target: String(c.target), received: seen.path, judged: logged?.path, allow: logged?.allow });
          }
        }
        for (const r of reached) {
          const why = JSON.stringify(r);
          expect(r.allow, why).toBe(true);
          expect(r.judged, why).toEqual(expect.any(String));
          // Portier judges the NFC form: an upstream that does not normalise sees another spelling of the
          // same name, never another path.
          expect(goServedPath(r.received)?.normalize("NFC"), `Go net/http: ${why}`).toBe(r.judged);
          expect(servletServedPath(r.received)?.normalize("NFC"), `servlet container: ${why}`).toBe(r.judged);
        }
        expect(reached.length, "every allowed case reached the upstream once").toBe(
          ALL.filter((c) => c[kind].status === 200).length,
        );
      });
    },
  );
});

describe("the upstream readings used above", () => {
  it.each([
    ["/v1/roles#/../../admin/secret.txt", "/admin/secret.txt", "/admin/secret.txt"],
    ["/v1/roles?x=1", "/v1/roles", "/v1/roles"],
    ["/v2/ORG002;x/centres", "/v2/ORG002;x/centres", "/v2/ORG002/centres"],
    ["/v2/a%2Fb/", "/v2/a/b/", "/v2/a/b/"],
    ["/v2/%C3%A9", "/v2/é", "/v2/é"],
  ])("%s: Go serves %s, a servlet container %s", (received, go, servlet) => {
    expect(goServedPath(received)).toBe(go);
    expect(servletServedPath(received)).toBe(servlet);
  });
});
