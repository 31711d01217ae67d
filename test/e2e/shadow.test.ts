/**
 * End to end through a real nginx (the shipped forward-auth config): `portier serve --shadow-bundle` with a real
 * candidate bundle (data/routes.json edited, built by `portier bundle build`). The gateway's answers are the
 * enforced policy's; /metrics counts each kind of difference; the decision lines of the differing calls carry
 * `shadow`; `portier replay --shadow` groups them from the captured log.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findBinary, startGateway, type RunningGateway } from "./harness/gateways.js";
import { bearer, send } from "./harness/http.js";
import { startIssuerProcess, startServiceProcess, type RunningPortier } from "./harness/portier.js";
import { onDecisionLine } from "./harness/process.js";
import { USERS, userToken } from "./harness/tokens.js";
import { startUpstream, type RunningUpstream } from "./harness/upstream.js";
import { CANDIDATE_CHANGES, buildCandidateBundle } from "../support/candidate-bundle.js";
import { metricValue } from "../support/metrics.js";
import { portierProcess } from "../support/cli.js";
import { tempDir, until } from "../service/helpers.js";

let issuer: RunningPortier | undefined;
let service: RunningPortier | undefined;
let upstream: RunningUpstream | undefined;
let gateway: RunningGateway | undefined;
let token: string;
let dir: string;
const lines: Record<string, unknown>[] = [];
const rawLines: string[] = [];

/** A teacher's (enseignant_jeune) calls: the enforced status through nginx, and how the candidate differs. */
const CALLS = [
  { path: "/v2/ORG001/elevesJeunes/E1/absences", status: 200, change: "new_deny" },
  { path: "/v2/ORG001/elevesAdultes/A1/calendrierScolaire", status: 403, change: "new_allow" },
  { path: "/v2/ORG001/elevesAdultes", status: 403, change: "other_reason" },
  { path: "/v1/roles", status: 200, change: "same" },
] as const;

const haveNginx = findBinary("nginx") !== undefined;

beforeAll(async () => {
  if (!haveNginx) return;
  dir = tempDir();
  const candidate = await buildCandidateBundle(join(dir, "candidate.tar.gz"));
  upstream = await startUpstream();
  issuer = await startIssuerProcess();
  service = await startServiceProcess(issuer.url, ["--shadow-bundle", candidate]);
  onDecisionLine(service.proc, (rec, line) => {
    lines.push(rec);
    rawLines.push(line);
  });
  token = (await userToken(issuer.url, "enseignant.jeune")).accessToken;
  gateway = await startGateway("nginx", { authPort: service.port, upstreamPort: upstream.port });
}, 180_000);

afterAll(async () => {
  await gateway?.stop();
  await service?.stop();
  await issuer?.stop();
  await upstream?.close();
});

describe.skipIf(!haveNginx)("a shadow candidate through nginx", () => {
  it("leaves every answer to the enforced policy and reports each difference", async () => {
    for (let round = 0; round < 3; round++)
      for (const call of CALLS) {
        const res = await send(gateway!.url, call.path, { headers: bearer(token) });
        expect(res.status, `${call.path} (round ${round})`).toBe(call.status);
      }
    // A call without a token is decided before the policy: never shadowed.
    expect((await send(gateway!.url, "/v1/roles")).status).toBe(401);

    await until(() => lines.length >= 3 * CALLS.length + 1, 10_000, 50);
    const metrics = await (await fetch(`${service!.url}/metrics`)).text();
    for (const call of CALLS)
      expect(metricValue(metrics, "portier_shadow_decisions_total", { change: call.change }), call.change).toBe(3);
    expect(metricValue(metrics, "portier_shadow_skipped_total", { why: "backlog" })).toBe(0);

    const shadowOf = (path: string) => lines.filter((l) => l.path === path).map((l) => l.shadow);
    const revision = (lines.find((l) => l.shadow) as { shadow: { revision: string } }).shadow.revision;
    expect(revision).not.toBe(lines[0]!.revision);
    expect(shadowOf(CALLS[0].path)).toEqual(Array(3).fill({ allow: false, reason: "role_not_allowed", revision }));
    expect(shadowOf(CALLS[1].path)).toEqual(Array(3).fill({ allow: true, reason: "allowed", revision }));
    expect(shadowOf(CALLS[2].path)).toEqual(Array(3).fill({ allow: false, reason: "route_unknown", revision }));
    expect(shadowOf(CALLS[3].path)).toEqual(Array(4).fill(undefined));
    expect(lines.find((l) => l.path === CALLS[0].path)).toMatchObject({ sub: USERS["enseignant.jeune"].sub });
  });

  it("portier replay --shadow groups the differences of the captured log", async () => {
    const log = join(dir, "decisions.log");
    writeFileSync(log, rawLines.join("\n") + "\n");
    const r = await portierProcess(["replay", "--log", log, "--shadow"]);
    expect(r.code).toBe(1);
    const out = r.stdout.split("\n");
    const row = (sign: string, route: string) =>
      out.find((l) => l.startsWith(`${sign} 3 x ${route} flow accessCode roles [enseignant_jeune]: `));
    expect(row("+", CANDIDATE_CHANGES.gained)).toContain(": deny (role_not_allowed) -> allow ");
    expect(row("-", CANDIDATE_CHANGES.lost)).toContain(": allow -> deny (role_not_allowed) ");
    expect(row("~", CANDIDATE_CHANGES.dropped)).toContain(": deny (role_not_allowed) -> deny (route_unknown) ");
    expect(out).toContainEqual(
      expect.stringMatching(
        /^9 decision\(s\) answered otherwise .*: 3 newly allowed, 3 newly denied, 3 with another deny reason; 12 /,
      ),
    );
  });
});
