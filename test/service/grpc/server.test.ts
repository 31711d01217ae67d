/**
 * The gRPC port in process (src/service/grpc/): a grpc-js client sends the CheckRequests Envoy sends and
 * gets Portier's answers (allow with X-Portier-* headers set and forged ones removed, 401 with
 * WWW-Authenticate, 403, 400 for a request Portier cannot read), the decision log and metrics label it
 * envoy_grpc, health follows /ready, and bad input (empty, huge, thousands of headers, non-UTF-8 path,
 * garbage bytes, a client that never reads) is refused while the service keeps answering others.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect } from "node:http2";
import * as grpc from "@grpc/grpc-js";
import {
  TEACHER,
  makeKeys,
  machineToken,
  serveInProcess,
  until,
  userToken,
  type InProcessService,
  sampleServeArgs,
} from "../helpers.js";
import { envoyCheck, grpcClients, headersOf, type GrpcClients } from "./client.js";
import { PORTIER_HEADERS } from "../../../src/service/gateway/answer.js";
import { loadServices } from "../../../src/service/grpc/server.js";

let svc: InProcessService;
let client: GrpcClients;
let teacher: string;
let machine: string;

const ALLOWED = "/v2/ORG001/elevesJeunes";
const REFUSED = "/v2/ORG001/elevesAdultes";

beforeAll(async () => {
  const keys = await makeKeys();
  svc = await serveInProcess([...sampleServeArgs(keys), "--grpc-port", "0", "--grpc-max-message-bytes", "65536"]);
  client = grpcClients(svc.service.grpcAddress!);
  teacher = await userToken(keys, TEACHER);
  machine = await machineToken(keys);
}, 60_000);

afterAll(async () => {
  client?.close();
  await svc?.stop();
});

const TOKEN = "@teacher@";
const MACHINE = "@machine@";
const withTokens = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, v.replace(TOKEN, teacher).replace(MACHINE, machine)]));

interface Case {
  why: string;
  method?: string;
  path: string;
  headers: Record<string, string>;
  /** google.rpc.Code, HTTP status of the denied_response (200 for an allow), reason. */
  code: number;
  http: number;
  reason: string;
}

const CASES: Case[] = [
  {
    why: "a teacher on a route of the role",
    path: ALLOWED,
    headers: { authorization: `Bearer ${TOKEN}` },
    code: 0,
    http: 200,
    reason: "allowed",
  },
  {
    why: "the query is validated then dropped",
    path: `${ALLOWED}?page=2`,
    headers: { authorization: `Bearer ${TOKEN}` },
    code: 0,
    http: 200,
    reason: "allowed",
  },
  {
    why: "a route of another role",
    path: REFUSED,
    headers: { authorization: `Bearer ${TOKEN}` },
    code: 7,
    http: 403,
    reason: "role_not_allowed",
  },
  {
    why: "the application flow",
    path: ALLOWED,
    headers: { authorization: `Bearer ${MACHINE}` },
    code: 0,
    http: 200,
    reason: "allowed",
  },
  { why: "no token", path: ALLOWED, headers: {}, code: 16, http: 401, reason: "token_missing" },
  {
    why: "two credentials joined by Envoy",
    path: ALLOWED,
    headers: { authorization: `Bearer ${TOKEN},Bearer ${TOKEN}` },
    code: 16,
    http: 401,
    reason: "token_malformed",
  },
  {
    why: "two tokens after one Bearer",
    path: ALLOWED,
    headers: { authorization: `Bearer ${TOKEN},${TOKEN}` },
    code: 16,
    http: 401,
    reason: "token_malformed",
  },
  {
    why: "the token is read from authorization only",
    path: ALLOWED,
    headers: { "x-authorization": `Bearer ${TOKEN}`, "proxy-authorization": `Bearer ${TOKEN}` },
    code: 16,
    http: 401,
    reason: "token_missing",
  },
  {
    why: "Basic credentials",
    path: ALLOWED,
    headers: { authorization: "Basic dXNlcjpwYXNz" },
    code: 16,
    http: 401,
    reason: "token_malformed",
  },
  {
    why: "the path is exactly http.path, not :path",
    path: REFUSED,
    headers: { authorization: `Bearer ${TOKEN}`, ":path": ALLOWED },
    code: 7,
    http: 403,
    reason: "role_not_allowed",
  },
  {
    why: "an encoded slash",
    path: "/v2/ORG001%2FelevesJeunes",
    headers: { authorization: `Bearer ${TOKEN}` },
    code: 7,
    http: 403,
    reason: "path_invalid",
  },
  {
    why: "a fragment",
    path: `${ALLOWED}#x`,
    headers: { authorization: `Bearer ${TOKEN}` },
    code: 7,
    http: 403,
    reason: "path_invalid",
  },
  {
    why: "a path parameter",
    path: `${ALLOWED};jsessionid=1`,
    headers: { authorization: `Bearer ${TOKEN}` },
    code: 7,
    http: 403,
    reason: "path_invalid",
  },
  {
    why: "a dot segment",
    path: "/v2/ORG001/x/../elevesJeunes",
    headers: { authorization: `Bearer ${TOKEN}` },
    code: 7,
    http: 403,
    reason: "path_invalid",
  },
  {
    why: "a path that arrived as invalid UTF-8 (U+FFFD after decoding)",
    path: `${ALLOWED}\uFFFD`,
    headers: { authorization: `Bearer ${TOKEN}` },
    code: 7,
    http: 403,
    reason: "path_invalid",
  },
];

describe("Check: what Envoy's CheckRequest gets", () => {
  it.each(CASES)("$why: $reason", async (c) => {
    const res = await client.check(envoyCheck(c.method ?? "GET", c.path, withTokens(c.headers)));
    expect(res.status?.code ?? 0).toBe(c.code);
    const meta = res.dynamic_metadata?.fields ?? {};
    expect(meta.reason).toMatchObject({ stringValue: c.reason });
    expect(meta.decision_id).toHaveProperty("stringValue");
    if (c.http === 200) {
      expect(res.ok_response).toBeDefined();
      expect(res.denied_response).toBeUndefined();
      return;
    }
    expect(res.denied_response?.status).toEqual({ code: c.http === 401 ? "Unauthorized" : "Forbidden" });
    const body = JSON.parse(res.denied_response!.body) as Record<string, unknown>;
    expect(body).toMatchObject({ allow: false, status: c.http, reason: c.reason });
    expect(body.decision_id).toBe((meta.decision_id as { stringValue: string }).stringValue);
    const headers = headersOf(res.denied_response!.headers);
    expect(headers["x-portier-reason"]).toBe(c.reason);
    expect(headers["content-type"]).toMatch(/^application\/json/);
    if (c.http === 401) expect(headers["www-authenticate"]).toMatch(/^Bearer\b/);
    else expect(headers["www-authenticate"]).toBeUndefined();
    // The token is never echoed.
    expect(JSON.stringify(res)).not.toContain(teacher);
  });

  it(
    "allow: every X-Portier-* header set, overwriting; forged x-portier-* headers removed; metadata for the " +
      "access log",
    async () => {
      const res = await client.check(
        envoyCheck("GET", ALLOWED, {
          authorization: `Bearer ${teacher}`,
          "x-portier-subject": "forged",
          "x-portier-admin": "true",
          "x-forwarded-for": "203.0.113.9, 10.0.0.7",
        }),
      );
      const ok = res.ok_response!;
      expect(ok.headers.map((h) => h.header.key).sort()).toEqual(PORTIER_HEADERS.map((h) => h.toLowerCase()).sort());
      for (const h of ok.headers) expect(h.append_action).toBe("OVERWRITE_IF_EXISTS_OR_ADD");
      const headers = headersOf(ok.headers);
      expect(headers).toMatchObject({
        "x-portier-subject": TEACHER,
        "x-portier-flow": "accessCode",
        "x-portier-reason": "allowed",
      });
      // Set headers are overwritten; the others are removed (a removal of a set header would drop Portier's value).
      expect(ok.headers_to_remove).toEqual(["x-portier-admin"]);
      expect(res.dynamic_metadata.fields).toMatchObject({
        flow: { stringValue: "accessCode" },
        route: { stringValue: expect.any(String) as unknown },
      });
      const id = (res.dynamic_metadata.fields.decision_id as { stringValue: string }).stringValue;
      await until(() => svc.output().includes(id));
      const line = JSON.parse(
        svc
          .output()
          .split("\n")
          .find((l) => l.includes(id))!,
      ) as Record<string, unknown>;
      expect(line).toMatchObject({
        event: "decision",
        adapter: "envoy_grpc",
        allow: true,
        client_address: "10.0.0.7",
        request_id: "0f6c6e2e-5b1a-4a35-9a0e-2f7a6c1b9d11",
      });
      expect(svc.output()).not.toContain(teacher);
    },
  );

  it(
    "header_map (Envoy's encode_raw_headers) is read " + "like headers; a repeated authorization is token_malformed",
    async () => {
      const raw = (key: string, value: string) => ({ key, raw_value: Buffer.from(value) });
      const one = envoyCheck("GET", ALLOWED) as { attributes: { request: { http: Record<string, unknown> } } };
      one.attributes.request.http.headers = {};
      one.attributes.request.http.header_map = { headers: [raw("authorization", `Bearer ${teacher}`)] };
      expect((await client.check(one)).status?.code ?? 0).toBe(0);
      one.attributes.request.http.header_map = {
        headers: [raw("authorization", `Bearer ${teacher}`), raw("authorization", `Bearer ${teacher}`)],
      };
      expect((await client.check(one)).dynamic_metadata.fields.reason).toMatchObject({
        stringValue: "token_malformed",
      });
    },
  );

  it("forged x-portier-* headers in header_map are removed like those in headers, raw_value or value", async () => {
    const check = envoyCheck("GET", ALLOWED) as { attributes: { request: { http: Record<string, unknown> } } };
    check.attributes.request.http.headers = {};
    check.attributes.request.http.header_map = {
      headers: [
        { key: "authorization", raw_value: Buffer.from(`Bearer ${teacher}`) },
        { key: "X-Portier-Admin", raw_value: Buffer.from("true") },
        { key: "x-portier-tenant-override", value: "ORG999" },
        { key: "x-portier-subject", raw_value: Buffer.from("forged") },
      ],
    };
    const ok = (await client.check(check)).ok_response!;
    expect(ok.headers_to_remove.sort()).toEqual(["x-portier-admin", "x-portier-tenant-override"]);
    // The one Portier sets is overwritten with its own value, not removed.
    expect(headersOf(ok.headers)["x-portier-subject"]).toBe(TEACHER);
  });

  it("metrics count the decisions under adapter envoy_grpc", async () => {
    const text = await (await fetch(`${svc.url}/metrics`)).text();
    expect(text).toMatch(/adapter="envoy_grpc"/);
  });
});

describe("Check: a request Portier cannot read is a 400 deny", () => {
  const BAD: [string, unknown, string][] = [
    ["an empty request", {}, "attributes is missing"],
    ["no http attributes", { attributes: { request: {} } }, "attributes.request.http is missing"],
    ["no method", { attributes: { request: { http: { path: ALLOWED } } } }, "attributes.request.http.method is empty"],
    ["no path", { attributes: { request: { http: { method: "GET" } } } }, "attributes.request.http.path is empty"],
  ];
  it.each(BAD)("%s", async (_why, request, message) => {
    const res = await client.check(request);
    expect(res.status.code).toBe(7);
    expect(res.denied_response?.status).toEqual({ code: "BadRequest" });
    expect(JSON.parse(res.denied_response!.body)).toMatchObject({
      allow: false,
      status: 400,
      reason: "request_invalid",
      message: expect.stringContaining(message) as unknown,
    });
  });
});

describe("Check: bad input is bounded and the service keeps answering", () => {
  it("a message above --grpc-max-message-bytes is refused with RESOURCE_EXHAUSTED", async () => {
    const huge = envoyCheck("GET", ALLOWED, { authorization: `Bearer ${teacher}`, "x-big": "a".repeat(70_000) });
    await expect(client.check(huge)).rejects.toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED });
    expect(
      (await client.check(envoyCheck("GET", ALLOWED, { authorization: `Bearer ${teacher}` }))).status?.code ?? 0,
    ).toBe(0);
  });

  it("thousands of headers: decided on authorization alone", async () => {
    const many: Record<string, string> = { authorization: `Bearer ${teacher}` };
    for (let i = 0; i < 3000; i++) many[`x-h-${i}`] = "v";
    const res = await client.check(envoyCheck("GET", ALLOWED, many));
    expect(res.status?.code ?? 0).toBe(0);
  });

  it("bytes that are not a CheckRequest: a gRPC error, not an allow", async () => {
    const garbage = Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]);
    const err = await new Promise<grpc.ServiceError | null>((resolve) => {
      client.authorization.makeUnaryRequest(
        "/envoy.service.auth.v3.Authorization/Check",
        (b: Buffer) => b,
        (b: Buffer) => b,
        garbage,
        new grpc.Metadata(),
        { deadline: Date.now() + 5000 },
        (e) => resolve(e),
      );
    });
    expect(err?.code).toBe(grpc.status.INTERNAL);
  });

  it(
    "a client that sends calls and never reads the " + "answers is cut off at a bounded memory; others are answered",
    async () => {
      const session = connect(`http://${svc.service.grpcAddress!}`, { settings: { initialWindowSize: 0 } });
      session.on("error", () => undefined);
      const body = Buffer.from(
        grpcFrame(envoyCheck("GET", ALLOWED, { authorization: `Bearer ${teacher}`, "x-pad": "p".repeat(4000) })),
      );
      const before = process.memoryUsage().rss;
      let opened = 0;
      for (let i = 0; i < 2000 && !session.destroyed && !session.closed; i++) {
        const stream = session.request(
          {
            ":method": "POST",
            ":path": "/envoy.service.auth.v3.Authorization/Check",
            "content-type": "application/grpc",
            te: "trailers",
          },
          { endStream: false },
        );
        stream.on("error", () => undefined);
        stream.end(body);
        opened++;
        if (i % 100 === 99) await new Promise((r) => setImmediate(r));
      }
      expect(opened).toBeGreaterThan(0);
      // Others are still answered while that session is open (or after it was cut off).
      expect(
        (await client.check(envoyCheck("GET", ALLOWED, { authorization: `Bearer ${teacher}` }))).status?.code ?? 0,
      ).toBe(0);
      expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
      session.destroy();
    },
  );
});

describe("Check: a failure inside Portier is gRPC INTERNAL (Envoy denies), never OK", () => {
  /** Runs `body` while the service's directory lookups throw (a fault inside Portier), then restores them. */
  async function whileLookupsThrow(body: () => Promise<void>): Promise<void> {
    const directory = svc.service.directory!;
    const lookup = directory.lookup.bind(directory);
    directory.lookup = () => {
      throw new Error("directory index unreadable (planted by the test)");
    };
    try {
      await body();
    } finally {
      directory.lookup = lookup;
    }
  }

  it("a decision that throws answers INTERNAL with its decision id, and the next one is decided again", async () => {
    await whileLookupsThrow(async () => {
      const err = await client.check(envoyCheck("GET", ALLOWED, { authorization: `Bearer ${teacher}` })).then(
        () => undefined,
        (e: grpc.ServiceError) => e,
      );
      expect(err?.code).toBe(grpc.status.INTERNAL);
      expect(err?.details).toMatch(/^the decision could not be made \(decision_id [0-9a-f-]{36}\)$/);
      expect(err?.details).not.toContain(teacher);
    });
    expect(
      (await client.check(envoyCheck("GET", ALLOWED, { authorization: `Bearer ${teacher}` }))).status?.code ?? 0,
    ).toBe(0);
  });

  it("the same fault on /decide is an internal_error deny (the HTTP shape of not deciding)", async () => {
    await whileLookupsThrow(async () => {
      const res = await fetch(`${svc.url}/decide`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ method: "GET", path: ALLOWED, token: teacher }),
      });
      expect(await res.json()).toMatchObject({ allow: false, status: 403, reason: "internal_error" });
    });
  });
});

describe("health follows /ready", () => {
  it("SERVING for the server and for Authorization; NOT_FOUND for another service", async () => {
    expect((await fetch(`${svc.url}/ready`)).status).toBe(200);
    await expect(client.health("")).resolves.toEqual({ status: "SERVING" });
    await expect(client.health("envoy.service.auth.v3.Authorization")).resolves.toEqual({ status: "SERVING" });
    await expect(client.health("some.Other")).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
  });
});

/** A gRPC length-prefixed message of a CheckRequest, serialised by the service definition. */
function grpcFrame(request: unknown): Uint8Array {
  const message = loadServices().authorization.Check!.requestSerialize(request);
  const out = Buffer.alloc(5 + message.length);
  out.writeUInt32BE(message.length, 1);
  message.copy(out, 5);
  return out;
}
