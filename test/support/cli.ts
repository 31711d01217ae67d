/**
 * Test support: runs the portier CLI from source, in this process (runCommand, what main.ts runs, with stdout
 * and stderr captured) or as a child process, and makes scratch copies of the project's policies/ and data/
 * to break on purpose.
 */
import { spawn } from "node:child_process";
import { Console } from "node:console";
import { cpSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { runCommand } from "../../src/cli/run-command.js";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { PORTIER_BIN } from "./portier-bin.js";

/** Every sub-command of `portier`, as `portier --help` lists them. */
export const COMMAND_NAMES = [
  "serve",
  "dev",
  "issuer",
  "explain",
  "matrix",
  "diff",
  "replay",
  "review",
  "test",
  "bundle",
  "data",
  "directory",
  "id-token",
  "token",
  "init",
];

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

let queue: Promise<unknown> = Promise.resolve();

/**
 * `portier ARGS` in this process, from the project folder: what it writes to process.stdout/stderr and the
 * console is captured (not shown) and its exit code is runCommand's. Runs one at a time (the capture is
 * process-wide), so several may be awaited together. Not for the long-running commands (serve, dev, issuer).
 */
export function portierInProcess(args: string[]): Promise<CliResult> {
  const run = queue.then(() => captured(() => runCommand(args)));
  queue = run.catch(() => undefined);
  return run;
}

async function captured(fn: () => Promise<number>): Promise<CliResult> {
  const result = { code: -1, stdout: "", stderr: "" };
  const sink =
    (key: "stdout" | "stderr") =>
    (chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
      result[key] += typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
      const done = rest.find((r) => typeof r === "function") as (() => void) | undefined;
      if (done) queueMicrotask(done);
      return true;
    };
  const stream = (key: "stdout" | "stderr") =>
    new Writable({ write: (chunk: Buffer, _enc, done) => (sink(key)(chunk), done()) });
  const { stdout, stderr } = process;
  // eslint-disable-next-line @typescript-eslint/unbound-method -- kept only to be put back on the same stream below.
  const saved = { out: stdout.write, err: stderr.write, console: globalThis.console };
  stdout.write = sink("stdout");
  stderr.write = sink("stderr");
  globalThis.console = new Console({ stdout: stream("stdout"), stderr: stream("stderr") });
  try {
    result.code = await fn();
  } finally {
    stdout.write = saved.out;
    stderr.write = saved.err;
    globalThis.console = saved.console;
  }
  return result;
}

/**
 * `portier ARGS` as a child process (node dist/cli/main.js, the compiled CLI), from the project folder unless
 * opts.cwd says otherwise, with opts.env added to the environment: main's own printing and exit code.
 */
export function portierProcess(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string> } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [PORTIER_BIN, ...args], {
      cwd: opts.cwd ?? PROJECT_ROOT,
      ...(opts.env ? { env: { ...process.env, ...opts.env } } : {}),
      // Under the longest test timeout that runs a command (180 s), so that a command slowed by a loaded machine
      // (`portier review` builds and tests two revisions) gets all its time, and a hung one still fails its test.
      timeout: 170_000,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c));
    child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
    child.on("error", reject);
    child.on("close", (code, signal) =>
      resolve({ code: code ?? -1, stdout, stderr: signal ? `${stderr}[killed by ${signal}]` : stderr }),
    );
  });
}

export function scratchProject(): string {
  const dir = mkdtempSync(join(tmpdir(), "portier-project-"));
  cpSync(join(PROJECT_ROOT, "policies"), join(dir, "policies"), { recursive: true });
  cpSync(join(PROJECT_ROOT, "data"), join(dir, "data"), { recursive: true });
  return dir;
}
