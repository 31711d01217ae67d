/**
 * Differential: the whole spec 4.3 matrix (every route of the spec x every role, a synced user without a
 * role, an unsynced user, the application flow) and the tenant cases (each caller on the other tenant's
 * codeOrganisme, a tenant-B user on both), asked through gRPC Check and through POST /decide of the same
 * service: the decisions must be identical (allow, status, reason, flow, route, subject's roles, message).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  TENANT_A,
  TENANT_B,
  decide,
  makeKeys,
  machineToken,
  serveInProcess,
  userToken,
  type InProcessService,
  sampleServeArgs,
} from "../helpers.js";
import { envoyCheck, grpcClients, headersOf, type GrpcClients } from "./client.js";
import { parseSpecSection43 } from "../../support/spec-4-3.js";
import { PROJECT_ROOT } from "../../../src/toolchain/project-root.js";
import type { CheckResponseMessage } from "../../../src/service/grpc/check.js";

const ROLES = (
  JSON.parse(readFileSync(join(PROJECT_ROOT, "data", "roles.json"), "utf8")) as { roles: { id: string }[] }
).roles.map((r) => r.id);
const ORG = { A: "ORG001", B: "ORG002" } as const;

let svc: InProcessService;
let client: GrpcClients;
/** Caller name -> bearer token. */
const callers = new Map<string, string>();

beforeAll(async () => {
  const keys = await makeKeys();
  const records: { sub: string; tenant_id: string; roles: string[] }[] = [];
  const user = async (name: string, tenant: string, roles: string[] | undefined): Promise<void> => {
    const sub = randomUUID();
    if (roles) records.push({ sub, tenant_id: tenant, roles });
    callers.set(name, await userToken(keys, sub, { tenant_id: tenant }));
  };
  for (const role of ROLES) await user(role, TENANT_A, [role]);
  await user("synced_without_role", TENANT_A, []);
  await user("not_synced", TENANT_A, undefined);
  await user("tenant_b_enseignant_jeune", TENANT_B, ["enseignant_jeune"]);
  callers.set("application", await machineToken(keys));
  svc = await serveInProcess([...sampleServeArgs(keys, records), "--grpc-port", "0", "--log-level", "warn"]);
  client = grpcClients(svc.service.grpcAddress!);
}, 60_000);

afterAll(async () => {
  client?.close();
  await svc?.stop();
});

interface Compared {
  allow: boolean;
  status: number;
  reason: string;
  flow: string | null;
  route: string | null;
  roles: string | null;
  message: string | null;
}

function fromDecide(json: {
  allow: boolean;
  status: number;
  reason: string;
  flow: string | null;
  route: { template: string } | null;
  subject: { roles: string[] } | null;
  message: string;
}): Compared {
  return {
    allow: json.allow,
    status: json.status,
    reason: json.reason,
    flow: json.flow,
    route: json.route?.template ?? null,
    roles: json.allow ? (json.subject?.roles ?? []).join(",") : null,
    message: json.allow ? null : json.message,
  };
}

function fromCheck(res: CheckResponseMessage): Compared {
  const meta = res.dynamic_metadata.fields as Record<string, { stringValue?: string }>;
  const common = {
    reason: meta.reason?.stringValue ?? "?",
    flow: meta.flow?.stringValue ?? null,
    route: meta.route?.stringValue ?? null,
  };
  if (res.ok_response)
    return {
      allow: (res.status?.code ?? 0) === 0,
      status: 200,
      ...common,
      roles: headersOf(res.ok_response.headers)["x-portier-roles"] ?? null,
      message: null,
    };
  const body = JSON.parse(res.denied_response!.body) as { status: number; message: string };
  return { allow: false, status: body.status, ...common, roles: null, message: body.message };
}

/** A concrete path of a spec template on a codeOrganisme. */
const pathOf = (template: string, org: string) => template.replace("{codeOrganisme}", org).replace(/\{[^}]+\}/g, "X1");

describe("gRPC Check and POST /decide decide the spec 4.3 matrix identically", () => {
  it("every route x every caller x both tenants' codeOrganisme", async () => {
    const spec = parseSpecSection43();
    expect(spec).toHaveLength(29);
    const differences: string[] = [];
    const seen = { allow: 0, deny: 0, reasons: new Set<string>() };
    for (const route of spec) {
      for (const [caller, token] of callers) {
        for (const org of [ORG.A, ORG.B]) {
          const path = pathOf(route.template, org);
          const overHttp = await decide(svc.url, { method: "GET", path, token });
          expect(overHttp.status).toBe(200);
          const http = fromDecide(overHttp.json);
          const grpc = fromCheck(await client.check(envoyCheck("GET", path, { authorization: `Bearer ${token}` })));
          if (JSON.stringify(http) !== JSON.stringify(grpc))
            differences.push(`${caller} GET ${path}: /decide ${JSON.stringify(http)} vs gRPC ${JSON.stringify(grpc)}`);
          seen[http.allow ? "allow" : "deny"]++;
          seen.reasons.add(http.reason);
        }
      }
    }
    expect(differences).toEqual([]);
    // The matrix exercised both answers and the reasons that matter (not one answer compared with itself).
    expect(seen.allow + seen.deny).toBe(29 * callers.size * 2);
    expect(seen.allow).toBeGreaterThan(50);
    expect(seen.deny).toBeGreaterThan(50);
    expect([...seen.reasons]).toEqual(expect.arrayContaining(["allowed", "role_not_allowed", "tenant_mismatch"]));
  }, 120_000);
});
