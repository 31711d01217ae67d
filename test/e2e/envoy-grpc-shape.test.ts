/**
 * The shipped mesh configurations (docs/gateways/envoy-grpc.yaml, docs/gateways/istio/), tested by shape:
 * Envoy and Istio cannot run here. The test reads the exact files and checks the values that matter (gRPC
 * ext_authz on Portier's cluster, V3, a timeout, failure_mode_allow false, HTTP/2 to Portier, the gRPC
 * health check, the access log's dynamic metadata keys; Istio's envoyExtAuthzGrpc provider, failOpen false,
 * the CUSTOM policy naming it, the Service port), then does what Envoy does with them against the real
 * service: builds the CheckRequest from a client request (lower-cased headers, repeated ones joined by ",",
 * path = :path), sends it over gRPC, and applies the CheckResponse to the upstream request or the client's
 * answer (ext_authz.cc: headers set, then removed; a deny's status, headers and body).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import YAML from "yaml";
import { SHIPPED_DIR } from "./harness/gateways.js";
import {
  TEACHER,
  makeKeys,
  serveInProcess,
  userToken,
  type InProcessService,
  sampleServeArgs,
} from "../service/helpers.js";
import { grpcClients, headersOf, type GrpcClients } from "../service/grpc/client.js";
import type { CheckResponseMessage } from "../../src/service/grpc/check.js";
import { at, type DocNode as Node } from "../support/at.js";

const envoy: unknown = YAML.parse(readFileSync(join(SHIPPED_DIR, "envoy-grpc.yaml"), "utf8"));
const hcm = at(envoy, "static_resources.listeners.0.filter_chains.0.filters.0.typed_config");
const extAuthz = at(
  (at(hcm, "http_filters") as Node[]).find((f) => f.name === "envoy.filters.http.ext_authz"),
  "typed_config",
);
const cluster = (name: string) => (at(envoy, "static_resources.clusters") as Node[]).find((c) => c.name === name);
const istio = (file: string): unknown => YAML.parse(readFileSync(join(SHIPPED_DIR, "istio", file), "utf8"));

/** Envoy's duration strings ("0.5s") in milliseconds (NaN for anything else). */
const ms = (d: unknown) => Number(/^(\d+(?:\.\d+)?)s$/.exec(typeof d === "string" ? d : "")?.[1]) * 1000;

describe("docs/gateways/envoy-grpc.yaml", () => {
  it("asks Portier's cluster over gRPC ext_authz V3, with a timeout, and denies when Portier cannot decide", () => {
    expect(at(extAuthz, "@type")).toBe("type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz");
    expect(at(extAuthz, "transport_api_version")).toBe("V3");
    expect(at(extAuthz, "failure_mode_allow")).toBe(false);
    expect(at(extAuthz, "http_service")).toBeUndefined();
    expect(at(extAuthz, "grpc_service.envoy_grpc.cluster_name")).toBe("portier");
    expect(ms(at(extAuthz, "grpc_service.timeout"))).toBeGreaterThan(0);
    expect(ms(at(extAuthz, "grpc_service.timeout"))).toBeLessThanOrEqual(1000);
    // Portier reads no body: the check carries none.
    expect(at(extAuthz, "with_request_body")).toBeUndefined();
    // The ext_authz filter runs before the router.
    expect((at(hcm, "http_filters") as Node[]).map((f) => f.name)).toEqual([
      "envoy.filters.http.ext_authz",
      "envoy.filters.http.router",
    ]);
    expect(at(hcm, "common_http_protocol_options.headers_with_underscores_action")).toBe("DROP_HEADER");
  });

  it("speaks HTTP/2 to Portier's gRPC port and health-checks it with grpc.health.v1", () => {
    const portier = cluster("portier");
    // The key has dots of its own: read as a member, not through a dotted path.
    const http = (at(portier, "typed_extension_protocol_options") as Node)[
      "envoy.extensions.upstreams.http.v3.HttpProtocolOptions"
    ];
    expect(at(http, "explicit_http_config")).toHaveProperty("http2_protocol_options");
    expect(at(portier, "load_assignment.endpoints.0.lb_endpoints.0.endpoint.address.socket_address.port_value")).toBe(
      9191,
    );
    expect(at(portier, "health_checks.0.grpc_health_check.service_name")).toBe("envoy.service.auth.v3.Authorization");
  });

  it("prints Portier's decision id, reason, flow and route in the access log", () => {
    const format = JSON.stringify(at(hcm, "access_log.0.typed_config.log_format.json_format"));
    for (const key of ["decision_id", "reason", "flow", "route"])
      expect(format).toContain(`%DYNAMIC_METADATA(envoy.filters.http.ext_authz:${key})%`);
  });
});

describe("docs/gateways/istio/", () => {
  const mesh = istio("mesh-config.yaml");
  const policy = istio("authorization-policy.yaml");
  const service = istio("portier-service.yaml");
  const provider = (at(mesh, "spec.meshConfig.extensionProviders") as Node[])[0];

  it("declares Portier as an envoyExtAuthzGrpc provider that fails closed", () => {
    expect(at(provider, "envoyExtAuthzGrpc.failOpen")).toBe(false);
    expect(ms(at(provider, "envoyExtAuthzGrpc.timeout"))).toBeLessThanOrEqual(1000);
    expect(at(provider, "envoyExtAuthzGrpc.service")).toBe(
      `${at(service, "metadata.name") as string}.${at(service, "metadata.namespace") as string}.svc.cluster.local`,
    );
    expect(at(provider, "envoyExtAuthzGrpc.port")).toBe(at(service, "spec.ports.0.port"));
    expect(at(service, "spec.ports.0.appProtocol")).toBe("grpc");
  });

  it("sends every request of the workload to it (AuthorizationPolicy action CUSTOM)", () => {
    expect(at(policy, "kind")).toBe("AuthorizationPolicy");
    expect(at(policy, "spec.action")).toBe("CUSTOM");
    expect(at(policy, "spec.provider.name")).toBe(at(provider, "name"));
    expect(at(policy, "spec.rules")).toEqual([{}]);
  });
});

describe("what Envoy does with envoy-grpc.yaml, against the real service", () => {
  let svc: InProcessService;
  let client: GrpcClients;
  let teacher: string;

  beforeAll(async () => {
    const keys = await makeKeys();
    svc = await serveInProcess([...sampleServeArgs(keys), "--grpc-port", "0"]);
    client = grpcClients(svc.service.grpcAddress!);
    teacher = await userToken(keys, TEACHER);
  }, 60_000);

  afterAll(async () => {
    client?.close();
    await svc?.stop();
  });

  /** The CheckRequest Envoy's ext_authz filter builds from a client request (check_request_utils.cc). */
  function checkRequestOf(method: string, path: string, headers: [string, string][]): Node {
    const joined = new Map<string, string>();
    for (const [name, value] of [
      [":method", method],
      [":path", path],
      [":authority", "api.example"],
      [":scheme", "http"],
      ...headers,
    ] as [string, string][]) {
      const key = name.toLowerCase();
      if (
        at(hcm, "common_http_protocol_options.headers_with_underscores_action") === "DROP_HEADER" &&
        key.includes("_")
      )
        continue;
      joined.set(key, joined.has(key) ? `${joined.get(key)},${value}` : value);
    }
    return {
      attributes: {
        request: {
          http: {
            id: "7",
            method,
            path,
            host: "api.example",
            scheme: "http",
            protocol: "HTTP/1.1",
            headers: Object.fromEntries(joined),
          },
        },
      },
    };
  }

  /** What the upstream receives (allow) or the client gets (deny), as Envoy applies the CheckResponse. */
  function apply(
    res: CheckResponseMessage,
    request: Node,
  ): { upstream?: Record<string, string>; client?: { status: number; headers: Record<string, string>; body: string } } {
    if ((res.status?.code ?? 0) === 0) {
      const upstream = { ...(at(request, "attributes.request.http.headers") as Record<string, string>) };
      for (const h of res.ok_response!.headers) {
        expect(h.append_action).toBe("OVERWRITE_IF_EXISTS_OR_ADD");
        upstream[h.header.key] = h.header.value;
      }
      for (const name of res.ok_response!.headers_to_remove) delete upstream[name];
      return { upstream };
    }
    const status =
      { Unauthorized: 401, Forbidden: 403, BadRequest: 400 }[String(res.denied_response!.status.code)] ?? 403;
    return { client: { status, headers: headersOf(res.denied_response!.headers), body: res.denied_response!.body } };
  }

  it("the health check Envoy sends answers SERVING", async () => {
    await expect(
      client.health(at(cluster("portier"), "health_checks.0.grpc_health_check.service_name") as string),
    ).resolves.toEqual({
      status: "SERVING",
    });
  });

  it(
    "allow: the upstream gets Portier's X-Portier-* values, never the client's, and the access log keys are " +
      "filled",
    async () => {
      const req = checkRequestOf("GET", "/v2/ORG001/elevesJeunes", [
        ["Authorization", `Bearer ${teacher}`],
        ["X-Portier-Subject", "forged"],
        ["X-Portier-Roles", "a"],
        ["X-Portier-Roles", "b"],
        ["X-Portier-Admin", "yes"],
        ["X_Portier_Tenant", "forged"],
      ]);
      const res = await client.check(req);
      const { upstream } = apply(res, req);
      expect(upstream).toMatchObject({
        "x-portier-subject": TEACHER,
        "x-portier-roles": "enseignant_jeune",
        "x-portier-reason": "allowed",
      });
      expect(upstream).not.toHaveProperty("x-portier-admin");
      expect(JSON.stringify(upstream)).not.toContain("forged");
      const format = JSON.stringify(at(hcm, "access_log.0.typed_config.log_format.json_format"));
      for (const [, key] of format.matchAll(/envoy\.filters\.http\.ext_authz:(\w+)/g))
        expect(res.dynamic_metadata.fields[key!]).toHaveProperty("stringValue");
    },
  );

  it(
    "two Authorization headers (joined by Envoy): the " + "client gets 401 token_malformed with WWW-Authenticate",
    async () => {
      const req = checkRequestOf("GET", "/v2/ORG001/elevesJeunes", [
        ["Authorization", `Bearer ${teacher}`],
        ["Authorization", `Bearer ${teacher}`],
      ]);
      const { client: answer } = apply(await client.check(req), req);
      expect(answer?.status).toBe(401);
      expect(answer?.headers["www-authenticate"]).toMatch(/^Bearer/);
      expect(JSON.parse(answer!.body)).toMatchObject({ reason: "token_malformed" });
    },
  );
});
