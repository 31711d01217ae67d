/**
 * Child processes of the end-to-end tests: each one is started in its own process group (detached) so
 * stopping it also stops anything it forked (nginx workers, cluster workers). Output is kept in memory
 * for error messages; stop() sends SIGTERM to the group, waits (bounded), then SIGKILL.
 */
import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";

export interface Managed {
  readonly name: string;
  readonly child: ChildProcess;
  /** stdout and stderr so far (capped). */
  output(): string;
  /** Set once the process has exited: a description of how. */
  exited(): string | undefined;
  /** Resolves with each complete stdout line, for start-up parsing. */
  onLine(listener: (line: string) => void): void;
  stop(timeoutMs?: number): Promise<void>;
}

const MAX_OUTPUT = 64 * 1024;

/**
 * Process groups still running. If the test worker ends without the tests' own stop() (the runner was
 * interrupted, or its parent died and the IPC channel dropped), they are killed then, never left behind.
 */
const live = new Set<number>();
let guardInstalled = false;
let runnerGone = false;

function killAllLive(): void {
  runnerGone = true;
  for (const pgid of live) {
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  live.clear();
}

function installGuard(): void {
  if (guardInstalled) return;
  guardInstalled = true;
  process.once("exit", killAllLive);
  process.once("disconnect", killAllLive);
}

export function startProcess(name: string, command: string, args: string[], options: SpawnOptions = {}): Managed {
  installGuard();
  if (runnerGone) throw new Error(`${name}: not started, the test runner has gone away`);
  const child = spawn(command, args, { ...options, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  const pgid = child.pid;
  if (pgid !== undefined) live.add(pgid);
  let out = "";
  let exitedHow: string | undefined;
  let pending = "";
  const listeners: Array<(line: string) => void> = [];
  const keep = (chunk: Buffer) => {
    out += chunk.toString("utf8");
    if (out.length > MAX_OUTPUT) out = out.slice(out.length - MAX_OUTPUT);
  };
  child.stdout?.on("data", (chunk: Buffer) => {
    keep(chunk);
    pending += chunk.toString("utf8");
    let nl: number;
    while ((nl = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      for (const l of listeners) l(line);
    }
  });
  child.stderr?.on("data", keep);
  const exit = new Promise<void>((resolve) => {
    child.once("exit", (code, signal) => {
      exitedHow = signal ? `killed by ${signal}` : `exited with code ${code}`;
      resolve();
    });
    child.once("error", (err) => {
      exitedHow = `could not start ${command}: ${err.message}`;
      resolve();
    });
  });

  const signalGroup = (signal: NodeJS.Signals) => {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // group already gone
    }
  };

  return {
    name,
    child,
    output: () => out,
    exited: () => exitedHow,
    onLine: (listener) => listeners.push(listener),
    async stop(timeoutMs = 10_000) {
      // Always signal the group: the leader may be gone while workers it forked are still alive.
      signalGroup("SIGTERM");
      if (exitedHow === undefined) {
        let timer: NodeJS.Timeout | undefined;
        const timedOut = await Promise.race([
          exit.then(() => false),
          new Promise<boolean>((r) => (timer = setTimeout(() => r(true), timeoutMs))),
        ]);
        clearTimeout(timer);
        if (timedOut) {
          signalGroup("SIGKILL");
          await exit;
        }
      }
      signalGroup("SIGKILL"); // stragglers of the group, if any
      if (pgid !== undefined) live.delete(pgid);
    },
  };
}

/** Waits (bounded) for a stdout line accepted by `match`; fails early if the process exits. */
export function waitForLine<T>(proc: Managed, match: (line: string) => T | undefined, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
    };
    const timer = setTimeout(
      () =>
        finish(() =>
          reject(new Error(`${proc.name}: no start-up line within ${timeoutMs} ms. Output:\n${proc.output()}`)),
        ),
      timeoutMs,
    );
    proc.onLine((line) => {
      const value = match(line);
      if (value !== undefined) finish(() => resolve(value));
    });
    proc.child.once("exit", () =>
      // let the last stdout chunk be parsed first
      setImmediate(() =>
        finish(() =>
          reject(new Error(`${proc.name} ${proc.exited() ?? "exited"} during start-up. Output:\n${proc.output()}`)),
        ),
      ),
    );
  });
}

/** Calls `listener` with each decision log line the process writes on stdout, parsed, and its text. */
export function onDecisionLine(proc: Managed, listener: (rec: Record<string, unknown>, line: string) => void): void {
  proc.onLine((line) => {
    let rec: unknown;
    try {
      rec = JSON.parse(line);
    } catch {
      return; // not a JSON line
    }
    if (typeof rec === "object" && rec !== null && (rec as { event?: unknown }).event === "decision")
      listener(rec as Record<string, unknown>, line);
  });
}
