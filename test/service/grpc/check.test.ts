/**
 * The CheckRequest -> DecisionRequest mapping and the answer -> CheckResponse mapping of
 * src/service/grpc/check.ts, as tables: what is read (path exactly, method, the one authorization header,
 * trace headers for the log), what is refused (no attributes, http, method, path), and the shape of allow,
 * deny and bad-request responses.
 */
import { describe, expect, it } from "vitest";
import {
  badRequestResponse,
  checkResponse,
  readCheckRequest,
  type CheckRequestMessage,
} from "../../../src/service/grpc/check.js";
import type { DecisionAnswer } from "../../../src/service/decide/decide.js";

const http = (fields: Record<string, unknown>): CheckRequestMessage => ({
  attributes: { request: { http: { method: "GET", path: "/a", ...fields } } },
});
const raw = (key: string, value: string) => ({ key, raw_value: Buffer.from(value, "latin1") });

describe("readCheckRequest", () => {
  const READ: [string, CheckRequestMessage, Record<string, unknown>][] = [
    [
      "path and method as given, query kept for the normaliser",
      http({ method: "PATCH", path: "/v2/X?q=%2F" }),
      { method: "PATCH", path: "/v2/X?q=%2F", token: undefined },
    ],
    [
      "the bearer token of authorization",
      http({ headers: { authorization: "Bearer abc.def.ghi" } }),
      { token: "abc.def.ghi" },
    ],
    [
      "authorization in another case is the same header",
      http({ headers: { Authorization: "Bearer abc" } }),
      { token: "abc" },
    ],
    [
      "two spellings of authorization: invalid",
      http({ headers: { Authorization: "Bearer abc", authorization: "Bearer abc" } }),
      { token: undefined, authorizationInvalid: true },
    ],
    [
      "two credentials joined by ','",
      http({ headers: { authorization: "Bearer a,Bearer b" } }),
      { token: undefined, authorizationInvalid: true },
    ],
    [
      "a token holding ','",
      http({ headers: { authorization: "Bearer a,b" } }),
      { token: undefined, authorizationInvalid: true },
    ],
    ["not Bearer", http({ headers: { authorization: "Basic x" } }), { token: undefined, authorizationInvalid: true }],
    [
      "no authorization: no token, not invalid",
      http({ headers: { "x-authorization": "Bearer a" } }),
      { token: undefined },
    ],
    ["header_map raw bytes", http({ header_map: { headers: [raw("authorization", "Bearer abc")] } }), { token: "abc" }],
    [
      "header_map: authorization twice",
      http({ header_map: { headers: [raw("authorization", "Bearer a"), raw("authorization", "Bearer a")] } }),
      { authorizationInvalid: true },
    ],
    [
      "headers and header_map both carrying authorization",
      http({ headers: { authorization: "Bearer a" }, header_map: { headers: [raw("authorization", "Bearer a")] } }),
      { authorizationInvalid: true },
    ],
    ["U+FFFD (invalid UTF-8 on the wire) becomes an invalid escape", http({ path: "/a\uFFFDb" }), { path: "/a%FFb" }],
    [
      "trace headers for the log",
      http({ headers: { "x-request-id": "r1", "x-forwarded-for": "1.1.1.1, 10.0.0.7" } }),
      { trace: { requestId: "r1", clientAddress: "10.0.0.7" } },
    ],
  ];
  it.each(READ)("%s", (_why, msg, expected) => {
    const r = readCheckRequest(msg);
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.request).toMatchObject(expected);
  });

  it("names the x-portier-* headers the client sent (lower-cased)", () => {
    const r = readCheckRequest(http({ headers: { "X-Portier-Subject": "x", "x-portier-admin": "1", other: "y" } }));
    expect(r.ok && r.clientPortierHeaders.sort()).toEqual(["x-portier-admin", "x-portier-subject"]);
  });

  const REFUSED: [string, CheckRequestMessage | null, string][] = [
    ["nothing", null, "attributes is missing"],
    ["no attributes", {}, "attributes is missing"],
    ["no request", { attributes: {} }, "attributes.request.http is missing"],
    ["no http", { attributes: { request: {} } }, "attributes.request.http is missing"],
    ["empty method", http({ method: "" }), "attributes.request.http.method is empty"],
    ["empty path", http({ path: "" }), "attributes.request.http.path is empty"],
  ];
  it.each(REFUSED)("refuses %s", (_why, msg, message) => {
    const r = readCheckRequest(msg);
    expect(r).toEqual({ ok: false, message: expect.stringContaining(message) as unknown });
  });
});

describe("checkResponse", () => {
  const base: DecisionAnswer = {
    allow: true,
    status: 200,
    reason: "allowed",
    message: "ok",
    flow: "accessCode",
    route: { template: "/v2/{codeOrganisme}/x" } as DecisionAnswer["route"],
    deprecated: false,
    mode: "enforce",
    would_deny: null,
    failed: false,
    decision_id: "d1",
    subject: { sub: "s\u00e9", tenant_id: "t", roles: ["a", "b"] },
  };

  it("allow: OK, seven overwriting headers (safe characters only), other client x-portier-* removed, metadata", () => {
    const r = checkResponse(base, ["x-portier-subject", "x-portier-admin"]);
    expect(r.status.code).toBe(0);
    expect(r.denied_response).toBeUndefined();
    expect(r.ok_response!.headers).toHaveLength(7);
    expect(r.ok_response!.headers.every((h) => h.append_action === "OVERWRITE_IF_EXISTS_OR_ADD")).toBe(true);
    expect(Object.fromEntries(r.ok_response!.headers.map((h) => [h.header.key, h.header.value]))).toMatchObject({
      "x-portier-subject": "s?",
      "x-portier-roles": "a,b",
      "x-portier-decision-id": "d1",
    });
    expect(r.ok_response!.headers_to_remove).toEqual(["x-portier-admin"]);
    expect(r.dynamic_metadata.fields).toEqual({
      decision_id: { stringValue: "d1" },
      reason: { stringValue: "allowed" },
      flow: { stringValue: "accessCode" },
      route: { stringValue: "/v2/{codeOrganisme}/x" },
    });
  });

  const DENY: [number, number, number][] = [
    [401, 16, 401],
    [403, 7, 403],
  ];
  it.each(DENY)("deny %i: gRPC code %i, HTTP %i, JSON body, no token", (status, code, httpStatus) => {
    const a: DecisionAnswer = {
      ...base,
      allow: false,
      status: status as 401 | 403,
      reason: "r",
      message: "m",
      flow: null,
      route: null,
      subject: null,
      www_authenticate: 'Bearer error="invalid_token"',
    };
    const r = checkResponse(a, []);
    expect(r.status).toEqual({ code, message: "r" });
    expect(r.denied_response!.status.code).toBe(httpStatus);
    expect(JSON.parse(r.denied_response!.body)).toEqual({
      allow: false,
      status,
      reason: "r",
      message: "m",
      decision_id: "d1",
    });
    const headers = Object.fromEntries(r.denied_response!.headers.map((h) => [h.header.key, h.header.value]));
    expect(headers["www-authenticate"] !== undefined).toBe(status === 401);
    expect(r.dynamic_metadata.fields.flow).toEqual({ nullValue: "NULL_VALUE" });
  });

  it("bad request: PERMISSION_DENIED with a 400 body naming the problem", () => {
    const r = badRequestResponse("attributes is missing");
    expect(r.status.code).toBe(7);
    expect(r.denied_response!.status.code).toBe(400);
    expect(JSON.parse(r.denied_response!.body)).toEqual({
      allow: false,
      status: 400,
      reason: "request_invalid",
      message: "attributes is missing",
    });
  });
});
