/**
 * Test support: runs the portier CLI from source as a child process, and makes scratch copies of
 * the project's policies/ and data/ to break on purpose.
 */
import { spawn, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";

export function portier(args: string[], opts: { cwd?: string } = {}): { code: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ["--import", "tsx", join(PROJECT_ROOT, "src", "cli", "main.ts"), ...args], {
    cwd: opts.cwd ?? PROJECT_ROOT,
    encoding: "utf8",
    timeout: 120_000,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** portier() without blocking the test worker's event loop (a long spawnSync starves vitest's RPC). */
export function portierAsync(args: string[], opts: { cwd?: string } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const p = spawn(process.execPath, ["--import", "tsx", join(PROJECT_ROOT, "src", "cli", "main.ts"), ...args], { cwd: opts.cwd ?? PROJECT_ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  p.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  p.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => p.kill("SIGKILL"), 120_000);
  return new Promise((resolve) => p.once("close", (code) => (clearTimeout(timer), resolve({ code: code ?? -1, stdout, stderr }))));
}

export function scratchProject(): string {
  const dir = mkdtempSync(join(tmpdir(), "portier-project-"));
  cpSync(join(PROJECT_ROOT, "policies"), join(dir, "policies"), { recursive: true });
  cpSync(join(PROJECT_ROOT, "data"), join(dir, "data"), { recursive: true });
  return dir;
}
