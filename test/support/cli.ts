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

/**
 * The same, without blocking the test worker's event loop (a long spawnSync starves vitest's RPC), so that
 * slow runs (opa test) can be awaited, several at once.
 */
export function portierAsync(args: string[], opts: { cwd?: string } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", join(PROJECT_ROOT, "src", "cli", "main.ts"), ...args], {
      cwd: opts.cwd ?? PROJECT_ROOT,
      timeout: 120_000,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c));
    child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

export function scratchProject(): string {
  const dir = mkdtempSync(join(tmpdir(), "portier-project-"));
  cpSync(join(PROJECT_ROOT, "policies"), join(dir, "policies"), { recursive: true });
  cpSync(join(PROJECT_ROOT, "data"), join(dir, "data"), { recursive: true });
  return dir;
}
