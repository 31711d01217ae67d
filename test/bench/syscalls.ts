/**
 * System calls per request ("the floor", issue 20): Portier `serve` (from dist/, one worker, decision log on, to
 * /dev/null) and the same-shaped server, each under wrk with the service benchmark's requests (GET
 * /forward-auth/nginx, POST /decide, path ids never repeating), `strace -c -f` attached to the server for one
 * window after a warm-up; prints each call's count per request, both servers side by side. strace slows the
 * server down several times, so the counts are what to read here, not the time (the CPU is make profile's).
 * Run: make build && npx tsx test/bench/syscalls.ts (SYSCALLS_SECONDS=4 traced, after 3 s of warm-up; strace from
 * Debian's strace package).
 */
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  createFixture,
  decideLoad,
  forwardAuthLoad,
  ROOT,
  serveArgs,
  shapeOf,
  SHAPED,
  startNode,
  stopServer,
  type Server,
} from "./fixture.js";
import { haveWrk, runWrk, type Load } from "./wrk.js";

const SECONDS = Number(process.env.SYSCALLS_SECONDS ?? 4);

/** `strace -c` summary rows: call name -> [calls, errors]. */
export function parseStraceSummary(text: string): Map<string, [number, number]> {
  const calls = new Map<string, [number, number]>();
  for (const line of text.split("\n")) {
    // % time, seconds, usecs/call, calls, [errors,] syscall
    const m = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:(\d+)\s+)?(\w+)\s*$/.exec(line);
    if (m && m[3] !== "total") calls.set(m[3]!, [Number(m[1]), Number(m[2] ?? 0)]);
  }
  return calls;
}

/** Per request: each call's count over the requests wrk completed while strace was attached. */
async function traced(server: Server, load: Load, dir: string, start: number): Promise<Map<string, number>> {
  const scriptFile = join(dir, "load.lua");
  await runWrk(server.url, load, { connections: 10, seconds: 3, start, scriptFile });
  const out = join(dir, `strace-${server.child.pid}.txt`);
  const strace = spawn("strace", ["-c", "-f", "-o", out, "-p", String(server.child.pid)], { stdio: "ignore" });
  await new Promise((r) => setTimeout(r, 500)); // strace attaches to every thread
  const r = await runWrk(server.url, load, { connections: 10, seconds: SECONDS, start: start + 1e6, scriptFile });
  strace.kill("SIGINT");
  if (strace.exitCode === null) await once(strace, "exit");
  const perRequest = new Map<string, number>();
  for (const [name, [calls]] of parseStraceSummary(readFileSync(out, "utf8"))) perRequest.set(name, calls / r.requests);
  return perRequest;
}

export async function main(): Promise<void> {
  if (!haveWrk()) throw new Error("wrk is not installed (Debian package wrk: apt-get install -y wrk)");
  if (spawnSync("strace", ["-V"], { stdio: "ignore" }).error)
    throw new Error("strace is not installed (Debian package strace: apt-get install -y strace)");
  const f = await createFixture();
  const la0 = loadavg()[0]!;
  const portier = await startNode("Portier", [], join(ROOT, "dist", "cli", "main.js"), serveArgs(f), {
    readyPath: "/ready",
  });
  const shaped = await startNode("same-shaped", [], SHAPED, ["{port}"], {
    readyPath: "/",
    env: { BENCH_SHAPE: await shapeOf(portier.url, f) },
  });
  try {
    let start = 1;
    for (const [name, load] of [
      ["GET /forward-auth/nginx", forwardAuthLoad(f)],
      ["POST /decide", decideLoad(f)],
    ] as const) {
      const p = await traced(portier, load, f.dir, (start += 1e7));
      const s = await traced(shaped, load, f.dir, (start += 1e7));
      console.log(`\n${name}: system calls per request (strace -c -f, ${SECONDS} s after 3 s of warm-up)`);
      console.log("| call | Portier | same-shaped |\n|---|---|---|");
      const names = [...new Set([...p.keys(), ...s.keys()])].sort((a, b) => (p.get(b) ?? 0) - (p.get(a) ?? 0));
      const cell = (m: Map<string, number>, k: string) => (m.get(k) ?? 0).toFixed(3);
      for (const k of names)
        if ((p.get(k) ?? 0) + (s.get(k) ?? 0) >= 0.005) console.log(`| ${k} | ${cell(p, k)} | ${cell(s, k)} |`);
      const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0).toFixed(2);
      console.log(`| **all** | **${sum(p)}** | **${sum(s)}** |`);
    }
  } finally {
    await stopServer(portier);
    await stopServer(shaped);
  }
  console.log(`\nload average ${la0.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
