/**
 * Metrics of the whole service with --workers 2 and --admin-port: decisions answered by both workers, then
 * every scrape of the admin port (whichever worker takes it) counts all of them; `*_total` series are
 * counters; health, readiness and metrics are not on the decision port.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  ISSUER,
  RECORDS,
  TEACHER,
  makeKeys,
  startServe,
  tempDir,
  until,
  userToken,
  writeDirectory,
  type ServiceProcess,
} from "./helpers.js";

let svc: ServiceProcess;
let admin: string;
const DECISIONS = 20;

beforeAll(async () => {
  const keys = await makeKeys();
  const dir = tempDir();
  const jwks = join(dir, "jwks.json");
  writeFileSync(jwks, JSON.stringify(keys.jwks));
  svc = await startServe(
    [
      "--issuer",
      ISSUER,
      "--jwks",
      jwks,
      "--directory",
      writeDirectory(dir, RECORDS),
      "--workers",
      "2",
      "--admin-port",
      "0",
    ],
    {},
    60_000,
  );
  const listening = svc
    .output()
    .split("\n")
    .map((l) => {
      try {
        return JSON.parse(l) as { msg?: string; adminUrl?: string };
      } catch {
        return {};
      }
    })
    .find((l) => l.msg === "listening");
  admin = listening?.adminUrl as string;
  // The service says "listening" when its first worker listens: wait for the second before spreading requests.
  await until(
    () =>
      svc
        .output()
        .split("\n")
        .filter((l) => l.includes('"event":"worker_listening"')).length === 2,
    30_000,
    50,
  );
  const token = await userToken(keys, TEACHER);
  // New connection per request, so that the cluster spreads them over both workers.
  for (let i = 0; i < DECISIONS; i++) {
    const res = await fetch(`${svc.url}/decide`, {
      method: "POST",
      headers: { "content-type": "application/json", connection: "close" },
      body: JSON.stringify({ method: "GET", path: "/v1/roles", token }),
    });
    expect(res.status).toBe(200);
  }
}, 90_000);

afterAll(async () => {
  await svc?.stop();
});

function decisionsCounted(text: string): number {
  return text
    .split("\n")
    .filter((l) => l.startsWith("portier_decisions_total{"))
    .reduce((sum, l) => sum + Number(l.split(" ").at(-1)), 0);
}

describe("metrics across workers", () => {
  it("the decisions were answered by both workers", async () => {
    const pids = () =>
      new Set(
        svc
          .output()
          .split("\n")
          .map((l) => {
            try {
              return JSON.parse(l) as { event?: string; pid?: number };
            } catch {
              return {};
            }
          })
          .filter((l) => l.event === "decision")
          .map((l) => l.pid),
      );
    // Decision lines are written in batches (at least every 200 ms).
    await until(() => pids().size === 2, 5000, 50);
    expect(pids().size).toBe(2);
  });

  it("every scrape of the admin port counts every worker's decisions", async () => {
    expect(admin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`${admin}/metrics`, { headers: { connection: "close" } });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
      expect(decisionsCounted(await res.text())).toBe(DECISIONS);
    }
  });

  it("declares *_total series as counters", async () => {
    const text = await (await fetch(`${admin}/metrics`)).text();
    const totals = [...text.matchAll(/^# TYPE (portier_\w+_total) (\w+)$/gm)];
    expect(totals.length).toBeGreaterThanOrEqual(5);
    for (const [, name, type] of totals) expect(type, name).toBe("counter");
    expect(text).toMatch(/^portier_keys_ready 1$/m);
  });

  it("serves health and readiness on the admin port, and none of the three on the decision port", async () => {
    expect((await fetch(`${admin}/health`)).status).toBe(200);
    expect((await fetch(`${admin}/ready`)).status).toBe(200);
    for (const path of ["/health", "/ready", "/metrics"])
      expect((await fetch(`${svc.url}${path}`)).status, path).toBe(404);
    expect((await fetch(`${admin}/decide`, { method: "POST", body: "{}" })).status).toBe(404);
  });
});
