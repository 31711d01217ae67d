/**
 * A real gRPC peer nobody here wrote: grpcurl (pinned in tools/ensure-grpcurl.sh, built by .ci/run) calls
 * `portier serve --grpc-port` as a process with the CheckRequest shapes Envoy's ext_authz filter sends
 * (allow, 401 with WWW-Authenticate, 403, 400), and the gRPC health service; with --workers 2 both workers
 * serve the gRPC port, and SIGTERM stops the whole service (exit 0). Skipped, saying why, where grpcurl is
 * not built (it needs Go).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import {
  TEACHER,
  makeKeys,
  machineToken,
  startServe,
  until,
  userToken,
  type ServiceProcess,
  sampleServeArgs,
} from "../service/helpers.js";

const GRPCURL = join(PROJECT_ROOT, ".tools", "bin", "grpcurl");
const PROTOS = join(PROJECT_ROOT, "src", "service", "grpc", "protos");
const present = existsSync(GRPCURL);
if (!present)
  console.warn(
    `grpcurl tests skipped: ${GRPCURL} is not built (run bash tools/ensure-grpcurl.sh, which needs Go; .ci/run does)`,
  );

interface GrpcurlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** grpcurl -plaintext with the vendored protos (no reflection), the request as JSON on stdin. */
function grpcurl(
  address: string,
  method: string,
  request: unknown,
  proto = "envoy/service/auth/v3/external_auth.proto",
): Promise<GrpcurlResult> {
  return new Promise((resolve) => {
    const child = execFile(
      GRPCURL,
      [
        "-plaintext",
        "-max-time",
        "10",
        "-import-path",
        PROTOS,
        "-proto",
        proto,
        "-format-error",
        "-d",
        "@",
        address,
        method,
      ],
      { timeout: 20_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
    child.stdin!.end(JSON.stringify(request));
  });
}

/** The CheckRequest Envoy sends (protojson names, as grpcurl reads them). */
function envoyCheck(path: string, headers: Record<string, string>): unknown {
  return {
    attributes: {
      source: { address: { socketAddress: { address: "10.0.0.7", portValue: 51234 } } },
      destination: { address: { socketAddress: { address: "10.0.0.1", portValue: 8080 } } },
      request: {
        time: "2026-11-25T12:00:00Z",
        http: {
          id: "42",
          method: "GET",
          headers: {
            ":authority": "api.example",
            ":method": "GET",
            ":path": path,
            ":scheme": "http",
            "x-request-id": "req-42",
            ...headers,
          },
          path,
          host: "api.example",
          scheme: "http",
          protocol: "HTTP/1.1",
        },
      },
    },
  };
}

function grpcAddressOf(svc: ServiceProcess): string {
  for (const line of svc.output().split("\n")) {
    try {
      const rec = JSON.parse(line) as { msg?: string; grpcAddress?: string };
      if (rec.msg === "listening" && rec.grpcAddress) return rec.grpcAddress;
    } catch {
      /* not JSON */
    }
  }
  throw new Error(`no grpcAddress in the listening line:\n${svc.output()}`);
}

describe.skipIf(!present)("grpcurl against portier serve --grpc-port", () => {
  let args: string[];
  let teacher: string;
  let machine: string;

  beforeAll(async () => {
    const keys = await makeKeys();
    args = [...sampleServeArgs(keys), "--grpc-port", "0"];
    teacher = await userToken(keys, TEACHER);
    machine = await machineToken(keys);
  }, 60_000);

  describe("one process", () => {
    let svc: ServiceProcess;
    let address: string;
    beforeAll(async () => {
      svc = await startServe(args);
      address = grpcAddressOf(svc);
    }, 60_000);
    afterAll(async () => {
      await svc?.stop();
    });

    it("allow: OK, every X-Portier-* header overwritten, decision in the dynamic metadata", async () => {
      const r = await grpcurl(
        address,
        "envoy.service.auth.v3.Authorization/Check",
        envoyCheck("/v2/ORG001/elevesJeunes?page=1", {
          authorization: `Bearer ${teacher}`,
          "x-portier-roles": "admin",
          "x-portier-extra": "1",
        }),
      );
      expect(r.stderr).toBe("");
      const res = JSON.parse(r.stdout) as {
        status?: { code?: number };
        okResponse: {
          headers: { header: { key: string; value: string }; appendAction: string }[];
          headersToRemove: string[];
        };
        dynamicMetadata: Record<string, string | null>;
      };
      expect(res.status?.code ?? 0).toBe(0);
      const headers = Object.fromEntries(res.okResponse.headers.map((h) => [h.header.key, h.header.value]));
      expect(headers).toMatchObject({
        "x-portier-subject": TEACHER,
        "x-portier-roles": "enseignant_jeune",
        "x-portier-flow": "accessCode",
      });
      expect(new Set(res.okResponse.headers.map((h) => h.appendAction))).toEqual(
        new Set(["OVERWRITE_IF_EXISTS_OR_ADD"]),
      );
      expect(res.okResponse.headersToRemove).toEqual(["x-portier-extra"]);
      expect(res.dynamicMetadata).toMatchObject({
        reason: "allowed",
        flow: "accessCode",
        route: "/v2/{codeOrganisme}/elevesJeunes",
      });
      expect(res.dynamicMetadata.decision_id).toMatch(/^[0-9a-f-]{36}$/);
      await until(() => svc.output().includes(res.dynamicMetadata.decision_id!));
      expect(svc.output()).toContain('"adapter":"envoy_grpc"');
    });

    it("the application flow is allowed", async () => {
      const r = await grpcurl(
        address,
        "envoy.service.auth.v3.Authorization/Check",
        envoyCheck("/v3/utilisateurs/moi", { authorization: `Bearer ${machine}` }),
      );
      expect(JSON.parse(r.stdout)).toMatchObject({
        okResponse: {},
        dynamicMetadata: { reason: "allowed", flow: "application" },
      });
    });

    it("no token: UNAUTHENTICATED with a 401 denied response and WWW-Authenticate", async () => {
      const r = await grpcurl(
        address,
        "envoy.service.auth.v3.Authorization/Check",
        envoyCheck("/v2/ORG001/elevesJeunes", {}),
      );
      const res = JSON.parse(r.stdout) as {
        status: { code: number };
        deniedResponse: {
          status: { code: string };
          headers: { header: { key: string; value: string } }[];
          body: string;
        };
      };
      expect(res.status.code).toBe(16);
      expect(res.deniedResponse.status.code).toBe("Unauthorized");
      const headers = Object.fromEntries(res.deniedResponse.headers.map((h) => [h.header.key, h.header.value]));
      expect(headers["www-authenticate"]).toMatch(/^Bearer/);
      expect(JSON.parse(res.deniedResponse.body)).toMatchObject({ allow: false, status: 401, reason: "token_missing" });
    });

    it("another role's route: PERMISSION_DENIED with a 403 body", async () => {
      const r = await grpcurl(
        address,
        "envoy.service.auth.v3.Authorization/Check",
        envoyCheck("/v2/ORG001/elevesAdultes", { authorization: `Bearer ${teacher}` }),
      );
      const res = JSON.parse(r.stdout) as {
        status: { code: number };
        deniedResponse: { status: { code: string }; body: string };
      };
      expect(res.status.code).toBe(7);
      expect(res.deniedResponse.status.code).toBe("Forbidden");
      expect(JSON.parse(res.deniedResponse.body)).toMatchObject({
        allow: false,
        status: 403,
        reason: "role_not_allowed",
      });
      expect(r.stdout).not.toContain(teacher);
    });

    it("a request without attributes: PERMISSION_DENIED with a 400 body", async () => {
      const r = await grpcurl(address, "envoy.service.auth.v3.Authorization/Check", {});
      const res = JSON.parse(r.stdout) as {
        status: { code: number };
        deniedResponse: { status: { code: string }; body: string };
      };
      expect(res.status.code).toBe(7);
      expect(res.deniedResponse.status.code).toBe("BadRequest");
      expect(JSON.parse(res.deniedResponse.body)).toMatchObject({ status: 400, reason: "request_invalid" });
    });

    it("health: SERVING for the server and the Authorization service; an unknown service is NOT_FOUND", async () => {
      const health = (service: string) =>
        grpcurl(address, "grpc.health.v1.Health/Check", { service }, "grpc/health/v1/health.proto");
      expect(JSON.parse((await health("")).stdout)).toEqual({ status: "SERVING" });
      expect(JSON.parse((await health("envoy.service.auth.v3.Authorization")).stdout)).toEqual({ status: "SERVING" });
      const unknown = await health("nope");
      expect(unknown.code).not.toBe(0);
      expect(unknown.stderr).toMatch(/"code": 5\b/); // NOT_FOUND
    });
  });

  it("--workers 2: the gRPC port answers from the workers, and SIGTERM stops the service with exit 0", async () => {
    // startServe passes --workers 1 first; the later flag wins.
    const svc = await startServe([...args, "--workers", "2"]);
    try {
      const address = grpcAddressOf(svc);
      const pids = new Set<number>();
      for (let i = 0; i < 8; i++) {
        const r = await grpcurl(
          address,
          "envoy.service.auth.v3.Authorization/Check",
          envoyCheck("/v2/ORG001/elevesJeunes", { authorization: `Bearer ${teacher}` }),
        );
        expect(JSON.parse(r.stdout)).toMatchObject({ dynamicMetadata: { reason: "allowed" } });
        const id = (JSON.parse(r.stdout) as { dynamicMetadata: { decision_id: string } }).dynamicMetadata.decision_id;
        await until(() => svc.output().includes(id));
        const line = svc
          .output()
          .split("\n")
          .find((l) => l.includes(id))!;
        pids.add((JSON.parse(line) as { pid: number }).pid);
      }
      // Each grpcurl call is a new connection; the cluster primary hands connections to the workers in turn.
      expect(pids.size).toBe(2);
      expect(
        JSON.parse((await grpcurl(address, "grpc.health.v1.Health/Check", {}, "grpc/health/v1/health.proto")).stdout),
      ).toEqual({ status: "SERVING" });
      const exited = new Promise<number | null>((resolve) => svc.proc.once("exit", (code) => resolve(code)));
      svc.proc.kill("SIGTERM");
      expect(await exited).toBe(0);
    } finally {
      await svc.stop();
    }
  }, 90_000);
});
