/**
 * Test support for process-life tests: `portier <command>` started from source in its own process group
 * (so a test can see and kill every process it made, workers included), its output, and the group's
 * live members.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { PROJECT_ROOT } from "./helpers.js";
import { PORTIER_BIN } from "../support/portier-bin.js";

export interface PortierGroup {
  proc: ChildProcess;
  pgid: number;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first process's exit code (or signal name) once its output is closed. */
  exited: Promise<number | string>;
  /** Waits until stdout or stderr matches; rejects when the process exits first or after timeoutMs. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** The processes of the group still alive (zombies excluded). */
  members(): number[];
  /** SIGKILL to the whole group (safe to call twice). */
  kill(): void;
}

const groups: PortierGroup[] = [];

export function startGroup(args: string[], env: Record<string, string> = {}): PortierGroup {
  const proc = spawn(process.execPath, [PORTIER_BIN, ...args], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const pgid = proc.pid as number;
  let out = "";
  let err = "";
  proc.stdout.on("data", (d: Buffer) => (out += d.toString()));
  proc.stderr.on("data", (d: Buffer) => (err += d.toString()));
  // 'close', not 'exit': by then stdout and stderr are read to the end (and every process holding them is gone).
  const exited = new Promise<number | string>((resolve) =>
    proc.once("close", (code, signal) => resolve(code ?? signal ?? -1)),
  );
  const group: PortierGroup = {
    proc,
    pgid,
    stdout: () => out,
    stderr: () => err,
    exited,
    async waitFor(pattern, timeoutMs = 30_000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const m = (out + err).match(pattern);
        if (m) return m;
        if (proc.exitCode !== null || proc.signalCode !== null)
          throw new Error(`exited (${proc.exitCode ?? proc.signalCode}) before ${pattern}\n${out}\n${err}`);
        if (Date.now() > end) throw new Error(`no ${pattern} within ${timeoutMs} ms\n${out}\n${err}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    members: () => groupMembers(pgid),
    kill() {
      try {
        process.kill(-pgid, "SIGKILL");
      } catch {
        /* already gone */
      }
    },
  };
  groups.push(group);
  return group;
}

/** Live (not zombie) processes whose process group is pgid. */
export function groupMembers(pgid: number): number[] {
  const ps = spawnSync("ps", ["-eo", "pid=,pgid=,stat="], { encoding: "utf8" });
  return ps.stdout
    .split("\n")
    .map((l) => l.trim().split(/\s+/))
    .filter(([, g, stat]) => Number(g) === pgid && stat !== undefined && !stat.startsWith("Z"))
    .map(([pid]) => Number(pid));
}

/** Kills every group started by this file's callers; for afterAll/afterEach. */
export function killAllGroups(): void {
  for (const g of groups.splice(0)) g.kill();
}

export async function untilGone(pgid: number, timeoutMs: number): Promise<number[]> {
  const end = Date.now() + timeoutMs;
  let left = groupMembers(pgid);
  while (left.length > 0 && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 100));
    left = groupMembers(pgid);
  }
  return left;
}
