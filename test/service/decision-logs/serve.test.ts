/**
 * `portier serve --decision-log-url` as a process, against a real HTTP collector that fails (503), stalls,
 * refuses connections and comes back: N decisions answered, N events received exactly once (counted by decision
 * id), across the outage, through a SIGTERM during an outage, and with --workers 2; no token in any event; the
 * bundle's mask and drop rules applied to the shipped event and the stdout line alike, a failing rule counted;
 * /ready listing a collector that fails too long (still ready) and /metrics counting; a bad token file a
 * start-up failure of one line.
 */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildBundle } from "../../../src/toolchain/build-bundle.js";
import { opaPath } from "../../../src/toolchain/opa.js";
import { scratchProject } from "../../support/cli.js";
import { idCounts, startCollector, type Collector } from "../../support/collector.js";
import { startGroup, type PortierGroup } from "../process-group.js";
import {
  decide,
  makeKeys,
  runServe,
  sampleServeArgs,
  startServe,
  TEACHER,
  TENANT_A,
  until,
  userToken,
  machineToken,
  type Keys,
  type ServiceProcess,
} from "../helpers.js";

let keys: Keys;
let collector: Collector | undefined;
const running: { stop(): Promise<void> }[] = [];

beforeAll(async () => {
  keys = await makeKeys();
}, 30_000);

afterEach(async () => {
  for (const r of running.splice(0)) await r.stop();
  await collector?.close();
  collector = undefined;
});

/**
 * Uploads every 100 ms. The upload time limit stays long (5 s): on a loaded machine a shorter one may expire after
 * the collector stored a batch, which is then delivered twice (the at-least-once case); stalls end by the
 * collector's stop, which cuts the connection.
 */
const FAST = ["--decision-log-period-seconds", "0.1", "--decision-log-timeout-seconds", "5"];

async function serve(args: string[]): Promise<ServiceProcess> {
  const svc = await startServe([...sampleServeArgs(keys), ...FAST, ...args]);
  running.push(svc);
  return svc;
}

/** N decisions through POST /decide; their decision ids. */
async function decisions(url: string, token: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const { status, json } = await decide<{ decision_id: string }>(url, {
      method: "GET",
      path: `/v2/ORG001/centres?n=${i}`,
      token,
    });
    expect(status).toBe(200);
    ids.push(json.decision_id);
  }
  return ids;
}

function expectExactlyOnce(received: Record<string, unknown>[], ids: string[]): void {
  const counts = idCounts(received);
  expect(ids.filter((id) => counts.get(id) !== 1)).toEqual([]);
  expect(received.length).toBe(ids.length);
}

function decisionLines(output: string): Record<string, unknown>[] {
  return output
    .split("\n")
    .filter((l) => l.includes('"decision"'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.event === "decision");
}

async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(name));
  return line === undefined ? NaN : Number(line.slice(line.lastIndexOf(" ") + 1));
}

describe("portier serve --decision-log-url", () => {
  it("delivers each decision once across a 503 outage, a stall and refused connections, no token", async () => {
    collector = await startCollector();
    const c = collector;
    const svc = await serve(["--decision-log-url", c.url, "--no-decision-log-stdout"]);
    // The start-up line names where the decision log goes.
    const listening = svc
      .output()
      .split("\n")
      .find((l) => l.includes('"event":"listening"'));
    expect((JSON.parse(listening!) as { decisionLogs: unknown }).decisionLogs).toEqual({
      stdout: false,
      collector: c.url,
    });
    const token = await userToken(keys, TEACHER);
    const ids = await decisions(svc.url, token, 20);
    c.mode = "fail";
    ids.push(...(await decisions(svc.url, token, 20)));
    await until(() => c.posts.some((p) => p.status === 503));
    c.mode = "stall";
    ids.push(...(await decisions(svc.url, token, 20)));
    await until(() => c.posts.some((p) => p.status === "stalled"));
    await c.stop();
    ids.push(...(await decisions(svc.url, token, 20)));
    c.mode = "ok";
    const back = Date.now();
    await c.start();
    await until(() => c.events.length >= ids.length, 20_000);
    expectExactlyOnce(c.events, ids);
    const raw = JSON.stringify(c.events);
    expect(raw).not.toContain(token);
    expect(raw).not.toContain(token.split(".")[2]!);
    const event = c.events[0]!;
    expect(event).toMatchObject({
      path: "portier/decision",
      labels: { version: expect.any(String) as unknown, id: expect.any(String) as unknown },
      input: { method: "GET", path: "/v2/ORG001/centres", token: { sub: TEACHER, tenant_id: TENANT_A } },
      result: { allow: true, reason: "allowed", sub: TEACHER },
      bundles: { portier: { revision: expect.any(String) as unknown } },
    });
    expect(decisionLines(svc.output())).toEqual([]);
    expect(await metric(svc.url, "portier_decision_logs_sent_events_total")).toBe(ids.length);
    expect(await metric(svc.url, 'portier_decision_logs_uploads_total{result="failed"}')).toBeGreaterThan(0);
    expect(await metric(svc.url, 'portier_decision_logs_dropped_total{reason="buffer_full"}')).toBe(0);
    // The last accepted upload came after the collector was back.
    const lastOk = await metric(svc.url, "portier_decision_logs_last_success_timestamp_seconds");
    expect(lastOk).toBeGreaterThanOrEqual(back / 1000);
    expect(lastOk).toBeLessThanOrEqual(Date.now() / 1000);
  }, 60_000);

  it("on SIGTERM during an outage retries within --shutdown-timeout, delivers once it is back", async () => {
    collector = await startCollector();
    const c = collector;
    await c.stop();
    const svc = await serve(["--decision-log-url", c.url, "--shutdown-timeout", "8"]);
    const ids = await decisions(svc.url, await machineToken(keys), 30);
    const exited = new Promise<number | null>((r) => svc.proc.once("exit", (code) => r(code)));
    const start = Date.now();
    svc.proc.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 1000));
    await c.start();
    expect(await exited).toBe(0);
    expect(Date.now() - start).toBeLessThan(8000);
    expectExactlyOnce(c.events, ids);
    // The stdout line is still written (--decision-log-stdout defaults to true).
    expect(decisionLines(svc.output()).map((l) => l.decision_id)).toEqual(ids);
  }, 60_000);

  it("on SIGTERM during an outage longer than --shutdown-timeout exits in time, counting the rest", async () => {
    collector = await startCollector();
    await collector.stop();
    const svc = await serve(["--decision-log-url", collector.url, "--shutdown-timeout", "1"]);
    await decisions(svc.url, await machineToken(keys), 10);
    const exited = new Promise<number | null>((r) => svc.proc.once("exit", (code) => r(code)));
    const start = Date.now();
    svc.proc.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(Date.now() - start).toBeLessThan(3000);
    const lost = svc
      .output()
      .split("\n")
      .find((l) => l.includes("decision_logs_lost"));
    expect(JSON.parse(lost!)).toMatchObject({ events: 10, collector: collector.url });
  }, 60_000);

  it("with --workers 2 ships every decision once (each worker its own)", async () => {
    collector = await startCollector();
    const c = collector;
    const group: PortierGroup = startGroup([
      "serve",
      ...sampleServeArgs(keys),
      ...FAST,
      "--port",
      "0",
      "--workers",
      "2",
      "--decision-log-url",
      c.url,
    ]);
    running.push({
      stop: async () => {
        group.proc.kill("SIGTERM");
        await group.exited;
      },
    });
    const url = (await group.waitFor(/"event":"listening","url":"([^"]+)"/))[1]!;
    // Both workers take connections (the primary listens once the first is ready).
    await until(() => group.stdout().split('"event":"worker_listening"').length > 2, 30_000);
    const token = await machineToken(keys);
    const ids = (await Promise.all([0, 1, 2, 3].map(() => decisions(url, token, 15)))).flat();
    await until(() => c.events.length >= ids.length, 20_000);
    expectExactlyOnce(c.events, ids);
    const workers = new Set(c.events.map((e) => (e.labels as { id: string }).id));
    expect(workers.size).toBe(2);
    group.proc.kill("SIGTERM");
    expect(await group.exited).toBe(0);
    expect(c.events.length).toBe(ids.length);
  }, 60_000);

  it("lists a collector failing past --decision-log-problem-seconds in /ready's problems, ready", async () => {
    collector = await startCollector();
    collector.mode = "fail";
    const svc = await serve([
      "--decision-log-url",
      collector.url.replace("http://", "http://audit:pa55word@"),
      "--decision-log-problem-seconds",
      "0.5",
    ]);
    await decisions(svc.url, await machineToken(keys), 1);
    let ready: { status: number; body: { problems?: string[] } } = { status: 0, body: {} };
    await until(async () => {
      const res = await fetch(`${svc.url}/ready`);
      ready = { status: res.status, body: (await res.json()) as { problems?: string[] } };
      return (ready.body.problems ?? []).some((p) => p.startsWith("decision logs:"));
    }, 10_000);
    expect(ready.status).toBe(200);
    const problem = ready.body.problems!.find((p) => p.startsWith("decision logs:"))!;
    expect(problem).toMatch(/the collector http:\/\/\*\*\*@127\.0\.0\.1:\d+\/logs has failed for \d+ s/);
    expect(problem + svc.output() + svc.stderr()).not.toContain("pa55word");
    expect(collector.posts[0]!.authorization).toBe(`Basic ${Buffer.from("audit:pa55word").toString("base64")}`);
  }, 60_000);

  it("sends the token file's bearer token, and refuses to start on an unreadable one (exit 2, one line)", async () => {
    collector = await startCollector();
    const file = join(sampleServeArgs(keys)[3]!, "..", "collector-token");
    writeFileSync(file, "collector-bearer-1\n");
    const svc = await serve(["--decision-log-url", collector.url, "--decision-log-token-file", file]);
    await decisions(svc.url, await machineToken(keys), 1);
    await until(() => collector!.events.length === 1);
    expect(collector.posts[0]!.authorization).toBe("Bearer collector-bearer-1");
    expect(svc.output()).not.toContain("collector-bearer-1");
    const failed = await runServe([
      ...sampleServeArgs(keys),
      "--decision-log-url",
      collector.url,
      "--decision-log-token-file",
      "/nonexistent/token",
    ]);
    expect(failed.code).toBe(2);
    expect(failed.stderr.trim().split("\n")).toEqual([
      "portier serve: config.decisionLogTokenFile: /nonexistent/token: cannot read it (ENOENT)",
    ]);
  }, 60_000);
});

describe("the bundle's mask and drop rules, end to end", () => {
  let dropBundle: string;
  let maskBundle: string;
  let failingBundle: string;

  beforeAll(async () => {
    // The project's policies plus a drop rule (allowed calls to /v2/ORG001/centres), then a mask rule that fails.
    const build = async (extra: string): Promise<string> => {
      const dir = scratchProject();
      writeFileSync(join(dir, "policies", "portier", "log", "extra.rego"), `package portier.log\n\n${extra}\n`);
      const out = join(dir, "bundle.tar.gz");
      await buildBundle({ opa: opaPath(), projectDir: dir, workDir: join(dir, "build"), out });
      return out;
    };
    dropBundle = await build('drop if {\n\tinput.result.allow\n\tinput.input.path == "/v2/ORG001/centres"\n}');
    maskBundle = await build(
      'mask contains "/input/token/sub"\n\nmask contains {"op": "upsert", "path": "/result/sub", "value": "***"}',
    );
    // Two values for one rule: evaluating it fails (a conflict), for every GET.
    failingBundle = await build(
      'drop := true if input.input.method == "GET"\n\ndrop := "yes" if input.input.method == "GET"',
    );
  }, 120_000);

  it("masks the shipped event and the stdout line alike with the bundle's mask rule", async () => {
    collector = await startCollector();
    const c = collector;
    const svc = await serve(["--decision-log-url", c.url, "--bundle", maskBundle]);
    const { json } = await decide<{ decision_id: string; allow: boolean }>(svc.url, {
      method: "GET",
      path: "/v2/ORG001/centres",
      token: await userToken(keys, TEACHER),
    });
    expect(json.allow).toBe(true);
    await until(() => c.events.length === 1);
    const event = c.events[0]!;
    expect(event).toMatchObject({ erased: ["/input/token/sub"], masked: ["/result/sub"], result: { sub: "***" } });
    let line: Record<string, unknown> | undefined;
    await until(
      () => (line = decisionLines(svc.output()).find((l) => l.decision_id === json.decision_id)) !== undefined,
    );
    expect(line!.sub).toBe("***");
    for (const text of [JSON.stringify(event), JSON.stringify(line)]) expect(text).not.toContain(TEACHER);
  }, 60_000);

  it("leaves out what the drop rule drops, from the collector and stdout alike, and keeps the rest", async () => {
    collector = await startCollector();
    const c = collector;
    const svc = await serve(["--decision-log-url", c.url, "--bundle", dropBundle]);
    const token = await machineToken(keys);
    const dropped = await decide<{ decision_id: string }>(svc.url, {
      method: "GET",
      path: "/v2/ORG001/centres",
      token,
    });
    const kept = await decide<{ decision_id: string }>(svc.url, { method: "GET", path: "/v9/unknown", token });
    await until(() => c.events.length === 1);
    await until(() => decisionLines(svc.output()).length === 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(c.events.map((e) => e.decision_id)).toEqual([kept.json.decision_id]);
    expect(decisionLines(svc.output()).map((l) => l.decision_id)).toEqual([kept.json.decision_id]);
    expect(await metric(svc.url, "portier_decision_logs_rule_dropped_total")).toBe(1);
    expect(dropped.json.decision_id).toBeTruthy();
  }, 60_000);

  it("drops and counts an event whose mask rule fails, never shipping or printing it unmasked", async () => {
    collector = await startCollector();
    const c = collector;
    const svc = await serve(["--decision-log-url", c.url, "--bundle", failingBundle]);
    const token = await machineToken(keys);
    const { status } = await decide(svc.url, { method: "GET", path: "/v2/ORG001/centres", token });
    expect(status).toBe(200);
    await until(async () => (await metric(svc.url, 'portier_decision_logs_dropped_total{reason="rule_error"}')) === 1);
    await new Promise((r) => setTimeout(r, 300));
    expect(c.events).toEqual([]);
    expect(decisionLines(svc.output())).toEqual([]);
    expect(svc.output()).toContain("decision_log_rule_failed");
  }, 60_000);
});
