/**
 * Runs the pinned OPA binary. Its path comes from --opa, $PORTIER_OPA, or tools/ensure-opa.sh (which finds
 * the pinned version on PATH or builds it from the Go module proxy into .tools/bin).
 */
import { execFile, execFileSync } from "node:child_process";
import { join } from "node:path";
import { PROJECT_ROOT } from "./project-root.js";

let resolved: string | undefined;

export function opaPath(explicit?: string): string {
  if (explicit) return explicit;
  if (process.env.PORTIER_OPA) return process.env.PORTIER_OPA;
  if (!resolved) {
    resolved = execFileSync("bash", [join(PROJECT_ROOT, "tools", "ensure-opa.sh")], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }).trim();
  }
  return resolved;
}

export interface OpaRun {
  code: number;
  stdout: string;
  stderr: string;
}

export function runOpa(opa: string, args: string[], cwd = PROJECT_ROOT): Promise<OpaRun> {
  return new Promise((resolve) => {
    execFile(opa, args, { cwd, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === "number" ? ((err as { code: number }).code) : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}
