/**
 * `portier serve --shadow-bundle` in this process, with a real candidate bundle (data/routes.json edited and built
 * by `portier bundle build`): answers are the enforced bundle's, each difference is counted by kind and carried by
 * its decision's log line, agreements only counted; a broken candidate is a /ready problem (still ready, answers
 * unchanged) until a good one replaces it; a missing file and two candidates are start-up failures.
 */
import { generateKeyPairSync } from "node:crypto";
import { copyFileSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CANDIDATE_CHANGES, buildCandidateBundle } from "../../support/candidate-bundle.js";
import { json, type ReadyJson } from "../../support/answers.js";
import { metricValue } from "../../support/metrics.js";
import {
  TEACHER,
  decide,
  makeKeys,
  sampleServeArgs,
  serveConfig,
  serveInProcess,
  tempDir,
  until,
  userToken,
  type InProcessService,
  type Keys,
} from "../helpers.js";
import { BROKEN_BUNDLE, bundleWithRevision } from "../bundles.js";
import { signBundle } from "../../../src/toolchain/sign-bundle.js";

let keys: Keys;
let candidate: string;
let dir: string;
const running: InProcessService[] = [];

beforeAll(async () => {
  keys = await makeKeys();
  dir = tempDir();
  candidate = await buildCandidateBundle(join(dir, "candidate.tar.gz"));
}, 120_000);

const servers: Server[] = [];
afterAll(async () => {
  await Promise.all(running.map((s) => s.stop()));
  await Promise.all(servers.map((s) => new Promise((r) => (s.closeAllConnections(), s.close(r)))));
});

async function serve(extra: string[]): Promise<InProcessService> {
  const s = await serveInProcess([...sampleServeArgs(keys), ...extra]);
  running.push(s);
  return s;
}

type Line = Record<string, unknown> & { decision_id?: string; shadow?: unknown };
const lines = (s: InProcessService): Line[] =>
  s
    .output()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);

/** The teacher's calls: one per kind of change, and one both policies agree on. */
const CALLS = {
  new_deny: "/v2/ORG001/elevesJeunes/E1/absences",
  new_allow: "/v2/ORG001/elevesAdultes/A1/calendrierScolaire",
  other_reason: "/v2/ORG001/elevesAdultes",
  same: "/v1/roles",
};

describe("a shadow candidate on live decisions", () => {
  it("never changes an answer; counts every verdict and logs what differs on the decision's line", async () => {
    const s = await serve(["--shadow-bundle", candidate]);
    const token = await userToken(keys, TEACHER);
    const ask = async (path: string) => (await decide(s.url, { method: "GET", path, token })).json;
    const [newDeny, newAllow, otherReason, same] = await Promise.all(
      [CALLS.new_deny, CALLS.new_allow, CALLS.other_reason, CALLS.same].map(ask),
    );
    const answers = { new_deny: newDeny!, new_allow: newAllow!, other_reason: otherReason!, same: same! };
    // The enforced bundle's answers.
    expect(answers.new_deny).toMatchObject({ allow: true, reason: "allowed" });
    expect(answers.new_allow).toMatchObject({ allow: false, reason: "role_not_allowed" });
    expect(answers.other_reason).toMatchObject({ allow: false, reason: "role_not_allowed" });
    expect(answers.same).toMatchObject({ allow: true, reason: "allowed" });
    // Decided before the policy: never shadowed.
    await decide(s.url, { method: "GET", path: CALLS.same });

    await until(() => lines(s).filter((l) => l.event === "decision").length === 5, 10_000, 20);
    const line = (id: string) => lines(s).find((l) => l.decision_id === id)!;
    const revision = s.service.policy.engine!.revision;
    const shadowRevision = String((await json<ReadyJson>(await fetch(`${s.url}/ready`))).shadow?.revision);
    expect(shadowRevision).toMatch(/\w/);
    expect(shadowRevision).not.toBe(revision);
    expect(line(answers.new_deny.decision_id)).toMatchObject({
      allow: true,
      route: CANDIDATE_CHANGES.lost,
      revision,
      shadow: { allow: false, reason: "role_not_allowed", revision: shadowRevision },
    });
    expect(line(answers.new_allow.decision_id).shadow).toEqual({
      allow: true,
      reason: "allowed",
      revision: shadowRevision,
    });
    expect(line(answers.other_reason.decision_id).shadow).toEqual({
      allow: false,
      reason: "route_unknown",
      revision: shadowRevision,
    });
    expect(line(answers.same.decision_id)).not.toHaveProperty("shadow");

    const metrics = await (await fetch(`${s.url}/metrics`)).text();
    for (const change of ["new_allow", "new_deny", "other_reason", "same"])
      expect(metricValue(metrics, "portier_shadow_decisions_total", { change }), change).toBe(1);
    expect(metricValue(metrics, "portier_shadow_revision_info", { revision: shadowRevision })).toBe(1);
    expect(metricValue(metrics, "portier_shadow_last_load_failed")).toBe(0);
    const ready = await fetch(`${s.url}/ready`);
    expect(ready.status).toBe(200);
    expect(await json<ReadyJson>(ready)).toMatchObject({
      problems: [],
      shadow: { loaded: true, sample: 1, decisions: { new_allow: 1, new_deny: 1, other_reason: 1, same: 1 } },
    });
  });

  it("a broken candidate is a problem on /ready, never unready, and a good one replacing it is taken", async () => {
    const file = join(dir, "broken.tar.gz");
    writeFileSync(file, BROKEN_BUNDLE);
    const s = await serve(["--shadow-bundle", file]);
    const token = await userToken(keys, TEACHER);
    const res = await decide(s.url, { method: "GET", path: CALLS.new_deny, token });
    expect(res.json).toMatchObject({ allow: true, reason: "allowed" });
    const ready = await fetch(`${s.url}/ready`);
    expect(ready.status).toBe(200);
    const body = await json<ReadyJson>(ready);
    expect(body.ready).toBe(true);
    expect(body.problems).toEqual([
      expect.stringMatching(
        /^shadow: candidate not loaded, no decision is shadowed \(enforcement unaffected\): .*broken\.tar\.gz/,
      ),
    ]);
    const metrics = await (await fetch(`${s.url}/metrics`)).text();
    expect(metricValue(metrics, "portier_shadow_last_load_failed")).toBe(1);
    expect(metricValue(metrics, "portier_shadow_skipped_total", { why: "no_candidate" })).toBe(1);
    expect(s.output()).toMatch(/"event":"shadow_refused"/);

    copyFileSync(candidate, `${file}.tmp`);
    renameSync(`${file}.tmp`, file);
    await until(async () => (await json<ReadyJson>(await fetch(`${s.url}/ready`))).problems.length === 0, 10_000, 100);
    await decide(s.url, { method: "GET", path: CALLS.new_deny, token });
    await until(() => lines(s).some((l) => l.shadow !== undefined), 10_000, 20);
  });

  it("holds the candidate to --verification-key: unsigned refused, signed taken", async () => {
    const signing = generateKeyPairSync("rsa", {
      modulusLength: 2048,
      publicKeyEncoding: { type: "spki", format: "pem" },
      privateKeyEncoding: { type: "pkcs8", format: "pem" },
    });
    const pub = join(dir, "bundle-pub.pem");
    writeFileSync(pub, signing.publicKey);
    const enforced = join(dir, "enforced-signed.tar.gz");
    writeFileSync(enforced, await signBundle(await bundleWithRevision("enforced-signed"), signing.privateKey));
    const file = join(dir, "unsigned-candidate.tar.gz");
    copyFileSync(candidate, file);
    const s = await serve(["--bundle", enforced, "--verification-key", pub, "--shadow-bundle", file]);
    const ready = await json<ReadyJson>(await fetch(`${s.url}/ready`));
    expect(ready).toMatchObject({ ready: true, policy: { revision: "enforced-signed" }, shadow: { loaded: false } });
    expect(ready.problems).toEqual([expect.stringMatching(/^shadow: candidate not loaded.*bundle signature/)]);
    writeFileSync(`${file}.tmp`, await signBundle(readFileSync(candidate), signing.privateKey));
    renameSync(`${file}.tmp`, file);
    await until(
      async () => (await json<ReadyJson>(await fetch(`${s.url}/ready`))).shadow?.loaded === true,
      10_000,
      100,
    );
  });

  it("polls --shadow-bundle-url: a failing server is a problem, its bundle then taken", async () => {
    let body: Buffer | undefined = undefined;
    const server = createServer((_req, res) => {
      if (body === undefined) res.writeHead(503).end();
      else res.writeHead(200, { "content-type": "application/gzip", etag: '"c1"' }).end(body);
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://user:secret@127.0.0.1:${(server.address() as AddressInfo).port}/candidate.tar.gz`;
    const s = await serve(["--shadow-bundle-url", url, "--bundle-poll-seconds", "0.2"]);
    const first = await json<ReadyJson>(await fetch(`${s.url}/ready`));
    expect(first.ready).toBe(true);
    expect(first.problems).toEqual([expect.stringMatching(/^shadow: candidate not loaded.*503/)]);
    // Credentials in the URL are never shown.
    expect(JSON.stringify(first)).not.toContain("secret");
    expect(first.shadow?.source).toMatch(/^http:\/\/\*\*\*@127\.0\.0\.1:\d+\/candidate\.tar\.gz$/);
    body = readFileSync(candidate);
    await until(
      async () => (await json<ReadyJson>(await fetch(`${s.url}/ready`))).shadow?.loaded === true,
      15_000,
      100,
    );
    const token = await userToken(keys, TEACHER);
    await decide(s.url, { method: "GET", path: CALLS.new_allow, token });
    await until(() => lines(s).some((l) => l.shadow !== undefined), 10_000, 20);
    expect(s.output()).not.toContain("secret");
  });

  it("refuses to start on a missing candidate file or on two candidates, naming the option", async () => {
    await expect(serve(["--shadow-bundle", join(dir, "nope.tar.gz")])).rejects.toThrow(
      /^config\.shadowBundle: file not found: .*nope\.tar\.gz \(pass the candidate bundle, or drop --shadow-bundle\)$/,
    );
    expect(() =>
      serveConfig([
        ...sampleServeArgs(keys),
        "--shadow-bundle",
        candidate,
        "--shadow-bundle-url",
        "http://127.0.0.1:1/b",
      ]),
    ).toThrow(/config\.shadowBundleUrl: cannot be combined with --shadow-bundle/);
    expect(() => serveConfig([...sampleServeArgs(keys), "--shadow-sample", "1.5"])).toThrow(
      /config\.shadowSample: must be <= 1 \(from --shadow-sample "1\.5"\)/,
    );
  });
});
