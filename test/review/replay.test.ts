/**
 * Impact replay: decisions made by the real decision pipeline (createDecide with the project's bundle)
 * are logged, then replayed under a candidate policy whose tenant binding moved ORG002 to tenant A.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { beforeAll, describe, expect, it } from "vitest";
import { loadEngine, type InProcessEngine } from "../../src/engine/index.js";
import { loadPolicySource, renderReplay, renderReplayMarkdown, replayLines } from "../../src/review/index.js";
import { createDecide } from "../../src/service/decide/decide.js";
import { TokenError } from "../../src/auth/index.js";
import { requireBundle } from "../support/bundle.js";
import { portierProcess, portierInProcess as portier, scratchProject } from "../support/cli.js";
import { fixedPolicy } from "../support/policy-snapshot.js";
import { TENANT_A, TENANT_B } from "../support/sample.js";
import type { Catalog } from "../../src/catalog/load-catalog.js";

/** A line of the decision log, as these tests read it. */
type LogLine = { event: string; input: unknown; revision: string; reason: string };

const user = (sub: string, tenant: string) => ({
  sub,
  client_id: "web",
  scope: ["openid", "apiclients"],
  auth_time: 1,
  idp: "local",
  tenant_id: tenant,
});
const CLAIMS: Record<string, Record<string, unknown>> = {
  teacherA: user("u-teacher-a", TENANT_A),
  teacherB: user("u-teacher-b", TENANT_B),
  machineA: { client_id: "m", aud: ["apiclients"], scope: ["apiclients"], tenant_id: TENANT_A },
};
const DIRECTORY: Record<string, { tenant_id: string; names: string[] }> = {
  "u-teacher-a": { tenant_id: TENANT_A, names: ["enseignant_jeune"] },
  "u-teacher-b": { tenant_id: TENANT_B, names: ["enseignant_jeune"] },
};

let current: InProcessEngine;
let candidateDir: string;
let logLines: string[];

async function decisionLog(): Promise<string[]> {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
      done();
    },
  });
  const verifier = {
    async verify(token: string) {
      const claims = CLAIMS[token];
      if (!claims) throw new TokenError("token_malformed", "not a token");
      return { claims };
    },
  };
  const decide = createDecide({
    verifier,
    policy: fixedPolicy(current),
    directory: { lookup: (sub: string) => DIRECTORY[sub] },
    rolesClaim: undefined,
    roleCheck: "enforce",
    logger: pino(sink),
    metrics: undefined,
  });
  const calls: [string | undefined, string][] = [
    ["teacherA", "/v2/ORG001/elevesJeunes/E1/absences"],
    ["teacherA", "/v2/ORG002/elevesJeunes/E2/absences"],
    ["teacherA", "/v2/ORG002/elevesJeunes/E3/absences"],
    ["teacherB", "/v2/ORG002/centres"],
    ["machineA", "/v2/ORG002/centres"],
    ["machineA", "/v1/roles"],
    [undefined, "/v1/roles"],
    ["garbage", "/v1/roles"],
  ];
  for (const [token, path] of calls) await decide({ method: "GET", path, token }, "decide");
  await new Promise((r) => setImmediate(r));
  return lines;
}

beforeAll(async () => {
  current = await loadEngine(requireBundle());
  logLines = await decisionLog();
  candidateDir = scratchProject();
  const file = join(candidateDir, "data", "tenants.json");
  const doc = JSON.parse(readFileSync(file, "utf8")) as Pick<Catalog, "tenants">;
  doc.tenants[0]!.codeOrganisme.push("ORG002");
  doc.tenants[1]!.codeOrganisme = [];
  writeFileSync(file, JSON.stringify(doc, null, 2));
}, 60_000);

describe("the decision log carries what replay needs", () => {
  it("has the exact policy input and revision on policy decisions, and no token anywhere", () => {
    const decisions = logLines.map((l) => JSON.parse(l) as LogLine).filter((e) => e.event === "decision");
    expect(decisions).toHaveLength(8);
    const first = decisions[0]!;
    expect(first.input).toEqual({
      method: "GET",
      path: "/v2/ORG001/elevesJeunes/E1/absences",
      token: expect.objectContaining({ sub: "u-teacher-a", tenant_id: TENANT_A }) as unknown,
      roles: ["enseignant_jeune"],
      synced: true,
      role_check: "enforce",
    });
    expect(first.revision).toBe(current.revision);
    expect(decisions.filter((e) => e.input === null).map((e) => e.reason)).toEqual([
      "token_missing",
      "token_malformed",
    ]);
    expect(logLines.join("\n")).not.toMatch(/teacherA|machineA|garbage/);
  });
});

describe("replay", () => {
  it("finds nothing to change under the policy that made the decisions", async () => {
    const r = await replayLines(logLines, current);
    expect(r).toMatchObject({ replayed: 6, unchanged: 6, notReplayable: 2, changes: [] });
    expect(renderReplay(r)).toMatch(/^6 decision\(s\) replayed under revision \w+: 0 newly allowed, 0 newly denied/m);
  });

  it("groups what a moved tenant binding changes, newly allowed first", async () => {
    const candidate = await loadPolicySource(candidateDir);
    const r = await replayLines([...logLines, "not json", JSON.stringify({ event: "listening" })], candidate);
    expect(r).toMatchObject({
      replayed: 6,
      newlyAllowed: 3,
      newlyDenied: 1,
      unchanged: 2,
      notReplayable: 2,
      malformedCount: 1,
    });
    expect(r.changes.map((c) => [c.change, c.route, c.flow, c.count])).toEqual([
      ["newly_allowed", "/v2/{codeOrganisme}/elevesJeunes/{idEleveJeune}/absences", "accessCode", 2],
      ["newly_allowed", "/v2/{codeOrganisme}/centres", "application", 1],
      ["newly_denied", "/v2/{codeOrganisme}/centres", "accessCode", 1],
    ]);
    expect(r.changes[0]).toMatchObject({
      roles: ["enseignant_jeune"],
      before: { allow: false, reason: "tenant_mismatch" },
      after: { allow: true, reason: "allowed" },
      example: { line: 2 },
    });
    expect(renderReplay(r)).toMatch(
      new RegExp(
        String.raw`^\+ 2 x \/v2\/\{codeOrganisme\}\/elevesJeunes\/\{idEleveJeune\}\/absences flow ` +
          String.raw`accessCode roles ` +
          String.raw`\[enseignant_jeune\]: deny \(tenant_mismatch\) -> allow {3}e\.g\. line 2: GET ` +
          String.raw`\/v2\/ORG002\/elevesJeunes\/E2\/absences$`,
        "m",
      ),
    );
    expect(renderReplay(r)).toMatch(/^! line 9: not JSON/m);
    expect(renderReplayMarkdown(r)).toMatch(
      /^\| newly allowed \| 2 \| `\/v2\/\{codeOrganisme\}\/elevesJeunes\/\{idEleveJeune\}\/absences` \|/m,
    );
  }, 60_000);

  it("exits 1 on changes, honours --fail-on new-allows, and 2 on errors (CLI)", async () => {
    const log = join(candidateDir, "decisions.log");
    writeFileSync(log, logLines.join("\n") + "\n");
    const changed = await portier(["replay", "--log", log, "--source", candidateDir]);
    expect(changed.code).toBe(1);
    expect(changed.stdout).toMatch(/3 newly allowed, 1 newly denied/);
    const same = await portier(["replay", "--log", log, "--bundle", requireBundle(), "--fail-on", "new-allows"]);
    expect(same.code).toBe(0);
    // The real process once, for main's exit code.
    const missing = await portierProcess([
      "replay",
      "--log",
      join(candidateDir, "nope.log"),
      "--bundle",
      requireBundle(),
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--log: not found: .*nope\.log$/m);
  }, 120_000);
});
