/**
 * Development tokens in a project's declared shape, end to end: a project from `portier init` whose
 * data/project.json names its user `uid`, its tenant `org`, a user scope and an application audience and scope;
 * `portier issuer --project DIR` mints, `portier token --project DIR --user NAME` signs a sample user in, and the
 * service serving the project (`portier serve --project DIR`) decides as the role table says.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { portierInProcess as portier, scratchProject } from "../support/cli.js";
import { projectTokenShape, tokenShapeLine } from "../../src/cli/project-token-shape.js";
import { SPEC_ISSUER_TOKEN_SHAPE } from "../../src/issuer/index.js";
import { projectAt } from "../../src/toolchain/project.js";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { PORTIER_BIN } from "../support/portier-bin.js";
import { serveInProcess, type InProcessService } from "../service/helpers.js";

const MACHINE = { client_id: "portier-demo-machine", client_secret: "portier-demo-secret" };

/** `portier issuer ARGS` as a process, resolved with its URL once it prints it. */
function startIssuerProcess(args: string[]): Promise<{ url: string; out: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [PORTIER_BIN, "issuer", "--port", "0", ...args], {
    env: { ...process.env, LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL printed: ${out}`)), 30_000);
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const url = /Issuer URL: (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
      if (url && out.includes("Dev mode")) {
        clearTimeout(timer);
        resolve({ url, out, child });
      }
    });
    child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.once("exit", (code) => reject(new Error(`exited early (${code}): ${out}`)));
  });
}

async function decide(service: InProcessService, method: string, path: string, token: string) {
  const res = await fetch(`${service.url}/decide`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ method, path, token }),
  });
  return (await res.json()) as { allow: boolean; reason: string; flow: string; subject?: Record<string, unknown> };
}

describe("a project naming its user uid and its tenant org, with its own scopes and audience", () => {
  let root: string;
  let dir: string;
  let issuer: { url: string; out: string; child: ChildProcess };
  let service: InProcessService;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "portier-claims-"));
    dir = join(root, "team");
    expect((await portier(["init", dir])).code).toBe(0);
    const file = join(dir, "data", "project.json");
    const choices = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
    choices.claims = { subject: "uid", tenant: "org" };
    choices.user_token = { claims: [], scope: "items.read" };
    choices.application_token = { audience: "items-api", scope: "items.machine" };
    writeFileSync(file, JSON.stringify(choices, null, 2));
    const built = await portier(["bundle", "build", "--project", dir]);
    expect(built.stderr).toBe("");
    issuer = await startIssuerProcess(["--project", dir]);
    service = await serveInProcess(["--project", dir, "--issuer", issuer.url, "--admin-port", "0"]);
  }, 180_000);

  afterAll(async () => {
    await service?.stop();
    if (issuer) {
      const exited = new Promise((resolve) => issuer.child.once("exit", resolve));
      issuer.child.kill("SIGTERM");
      await exited;
    }
    rmSync(root, { recursive: true, force: true });
  });

  it("the issuer signs in the project's users and says how its tokens differ from the spec's", () => {
    expect(issuer.out).toContain(`Users: 2 from ${join(dir, "data", "sample", "users.json")}`);
    expect(issuer.out).toContain(
      "Tokens (data/project.json): user id in uid, tenant in org, user scope items.read; " +
        "application aud items-api, scope items.machine.",
    );
  });

  // The role table of `portier init`: GET /items reader and writer, POST /items writer, history writer.
  it.each([
    ["alice", "GET", "/items", true, "allowed"],
    ["alice", "POST", "/items", false, "role_not_allowed"],
    ["alice", "GET", "/items/7/history", false, "role_not_allowed"],
    ["bob", "GET", "/items", true, "allowed"],
    ["bob", "POST", "/items", true, "allowed"],
    ["bob", "GET", "/items/7/history", true, "allowed"],
  ])("portier token --user %s: %s %s is allow=%s (%s)", async (user, method, path, allow, reason) => {
    const r = await portier(["token", "--project", dir, "--issuer", issuer.url, "--user", user]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const token = r.stdout.trim();
    const claims = decodeJwt(token);
    expect(claims).toHaveProperty("uid");
    expect(claims).toHaveProperty("org");
    expect(claims).not.toHaveProperty("sub");
    expect(claims).not.toHaveProperty("tenant_id");
    expect(claims.scope).toEqual(["openid", "items.read"]);
    const decision = await decide(service, method, path, token);
    expect(decision).toMatchObject({ allow, reason, flow: "accessCode" });
  });

  it("a client-credentials token from the issuer is taken for an application token", async () => {
    const res = await fetch(`${issuer.url}/connect/token`, {
      method: "POST",
      body: new URLSearchParams({ grant_type: "client_credentials", ...MACHINE }),
    });
    expect(res.status).toBe(200);
    const token = ((await res.json()) as { access_token: string }).access_token;
    expect(decodeJwt(token)).toMatchObject({ aud: "items-api", scope: ["items.machine"] });
    // Accepted (not audience_mismatch): the project role-checks applications, and this client has no roles.
    const decision = await decide(service, "GET", "/items", token);
    expect(decision).toMatchObject({ allow: false, reason: "role_not_allowed", flow: "application" });
    expect(decision.subject).toMatchObject({ client_id: MACHINE.client_id, roles: [] });
  });
});

describe("the issuer's token shape of a project", () => {
  it("is the spec's for the spec's project, which the issuer does not mention", () => {
    const shape = projectTokenShape(projectAt(PROJECT_ROOT));
    expect(shape).toEqual(SPEC_ISSUER_TOKEN_SHAPE);
    expect(tokenShapeLine(shape)).toBeUndefined();
  });

  it("asks no user scope of a project without data/project.json, as its policies do", () => {
    const dir = scratchProject();
    try {
      rmSync(join(dir, "data", "project.json"));
      expect(projectTokenShape(projectAt(dir))).toEqual({ ...SPEC_ISSUER_TOKEN_SHAPE, userScope: null });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
