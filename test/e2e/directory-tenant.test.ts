/**
 * End to end, through real nginx and caddy: a synced-users record filed under another tenant is not the
 * caller. The service runs with a directory that files the tenant-B teacher under tenant A and the
 * tenant-A teacher under tenant B; their tokens (from the local issuer) carry their real tenants, so
 * neither is synced, even on an "all synced" route of their own tenant. A correctly filed user passes.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeThroughGateways } from "./harness/describe-gateways.js";
import { bearer, send } from "./harness/http.js";
import { startIssuerProcess, startServiceProcess, type RunningPortier } from "./harness/portier.js";
import { TENANT_A, TENANT_B, USERS, userToken, type Username } from "./harness/tokens.js";
import { startUpstream, type RunningUpstream } from "./harness/upstream.js";

const CASES: { caller: Username; path: string; status: number; why: string }[] = [
  {
    caller: "enseignant.jeune.b",
    path: "/v2/ORG002/centres",
    status: 403,
    why: "tenant-B token, record filed under tenant A",
  },
  {
    caller: "enseignant.jeune",
    path: "/v2/ORG001/centres",
    status: 403,
    why: "tenant-A token, record filed under tenant B",
  },
  {
    caller: "eleve.adulte",
    path: "/v2/ORG001/centres",
    status: 200,
    why: "tenant-A token, record filed under tenant A",
  },
];

let issuer: RunningPortier | undefined;
let service: RunningPortier | undefined;
let upstream: RunningUpstream;
const tokens = new Map<Username, string>();

describe("directory records of another tenant, behind real gateways", () => {
  beforeAll(async () => {
    const file = join(mkdtempSync(join(tmpdir(), "portier-e2e-dir-")), "directory.json");
    writeFileSync(
      file,
      JSON.stringify([
        { sub: USERS["enseignant.jeune.b"].sub, tenant_id: TENANT_A, roles: ["enseignant_jeune"] },
        { sub: USERS["enseignant.jeune"].sub, tenant_id: TENANT_B, roles: ["enseignant_jeune"] },
        { sub: USERS["eleve.adulte"].sub, tenant_id: TENANT_A, roles: ["eleve_adulte"] },
      ]),
    );
    upstream = await startUpstream();
    issuer = await startIssuerProcess();
    service = await startServiceProcess(issuer.url, ["--directory", file]);
    for (const { caller } of CASES) tokens.set(caller, (await userToken(issuer.url, caller)).accessToken);
  }, 120_000);

  afterAll(async () => {
    await service?.stop();
    await issuer?.stop();
    await upstream?.close();
  });

  it.each(CASES)("/forward-auth: $status $caller $path ($why)", async ({ caller, path, status }) => {
    const res = await send(service!.url, "/forward-auth/nginx", {
      headers: { ...bearer(tokens.get(caller)!), "x-original-method": "GET", "x-original-uri": path },
    });
    expect(res.status).toBe(status);
    if (status === 403) expect(res.headers["x-portier-reason"]).toBe("not_synced");
  });

  describeThroughGateways(
    (kind) => `through ${kind}`,
    () => ({ authPort: service!.port, upstreamPort: upstream.port }),
    (_kind, gateway) => {
      it.each(CASES)("$status $caller $path ($why)", async ({ caller, path, status }) => {
        upstream.seen.length = 0;
        const res = await send(gateway().url, path, { headers: bearer(tokens.get(caller)!) });
        expect(res.status).toBe(status);
        expect(upstream.seen).toHaveLength(status === 200 ? 1 : 0);
      });
    },
  );
});
