/**
 * The service benchmark's wrk driver builds the requests it claims to: a server records what wrk sends with
 * the generated Lua script (bodies and headers with the path filled in, variants in turn, ids that never
 * repeat or a fixed one), and the process-tree CPU time counts a child's work. Skipped without wrk.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { haveWrk, runWrk, treeCpuSeconds, type Load } from "./wrk.js";

interface Seen {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

describe.skipIf(!haveWrk())("wrk driver", () => {
  let server: Server;
  let base = "";
  let seen: Seen[] = [];
  const dir = mkdtempSync(join(tmpdir(), "portier-wrk-test-"));

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
        res.statusCode = req.url === "/fail" ? 500 : 200;
        res.end("ok");
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const run = (load: Load, start = 1000) =>
    runWrk(base, load, { connections: 2, seconds: 1, start, scriptFile: join(dir, "s.lua") });

  it.each([
    { unique: true, name: "ids never repeating" },
    { unique: false, name: "the fixed id 42" },
  ])("POST bodies carry the path, variants in turn, $name", async ({ unique }) => {
    seen = [];
    const load: Load = {
      method: "POST",
      target: "/decide",
      pathTemplate: "/v2/ORG/x/{id}/y",
      unique,
      variants: ["A]]", "B"].map((t) => ({
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ path: "__PATH__", token: t }),
      })),
    };
    const r = await run(load);
    expect(r.bad).toBe(0);
    expect(r.requests).toBeGreaterThan(10);
    expect(r.p99Ms).toBeGreaterThanOrEqual(r.p50Ms);
    const bodies = seen.map((s) => JSON.parse(s.body) as { path: string; token: string });
    expect(
      seen.every((s) => s.method === "POST" && s.url === "/decide" && s.headers["content-type"] === "application/json"),
    ).toBe(true);
    expect(new Set(bodies.map((b) => b.token))).toEqual(new Set(["A]]", "B"]));
    const ids = bodies.map((b) => /^\/v2\/ORG\/x\/(\d+)\/y$/.exec(b.path)?.[1]);
    expect(ids.every((id) => id !== undefined)).toBe(true);
    if (unique) {
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.every((id) => Number(id) > 1000)).toBe(true);
    } else expect(new Set(ids)).toEqual(new Set(["42"]));
  });

  it("puts the path into a header marked __PATH__ and counts non-2xx answers as bad", async () => {
    seen = [];
    const ok = await run({
      method: "GET",
      target: "/fa",
      pathTemplate: "/p/{id}",
      unique: true,
      variants: [{ headers: { "x-original-uri": "__PATH__", authorization: "Bearer t" } }],
    });
    expect(ok.bad).toBe(0);
    expect(
      seen.every(
        (s) => /^\/p\/\d+$/.test(String(s.headers["x-original-uri"])) && s.headers.authorization === "Bearer t",
      ),
    ).toBe(true);
    const failing = await run({
      method: "GET",
      target: "/fail",
      pathTemplate: "/",
      unique: false,
      variants: [{ headers: {} }],
    });
    expect(failing.bad).toBe(failing.requests);
  });

  it("counts the CPU time of a process's children", async () => {
    // A shell whose child burns 0.5 s of CPU, says so, and lives until its input ends: the shell itself uses next to
    // none.
    // /proc counts in clock ticks, sampled: expect most of it (0.4 s), never what the shell alone could show.
    const burn =
      "const u=()=>{const c=process.cpuUsage();return (c.user+c.system)/1e6};" +
      "while(u()<0.5);console.log('burnt');" +
      "process.stdin.resume();process.stdin.on('end',()=>process.exit())";
    const sh = spawn("sh", ["-c", `${process.execPath} -e "${burn}"; true`], { stdio: ["pipe", "pipe", "inherit"] });
    await new Promise<void>((r) => sh.stdout.on("data", (d: Buffer) => d.toString().includes("burnt") && r()));
    const cpu = treeCpuSeconds(sh.pid!);
    sh.stdin.end(); // the child exits at the end of its input
    await new Promise((r) => sh.on("exit", r));
    expect(cpu).toBeGreaterThanOrEqual(0.4);
  });
});
