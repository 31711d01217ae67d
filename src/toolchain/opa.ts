/**
 * Runs the pinned OPA binary. Its path comes from --opa, $PORTIER_OPA, or tools/ensure-opa.sh (which finds
 * the pinned version on PATH or builds it from the Go module proxy into .tools/bin).
 */
import { execFile, execFileSync } from "node:child_process";
import { join } from "node:path";
import { PROJECT_ROOT } from "./project-root.js";
import { codeOf, messageOf } from "../errors/caught.js";

let resolved: string | undefined;

export function opaPath(explicit?: string): string {
  if (explicit) return explicit;
  if (process.env.PORTIER_OPA) return process.env.PORTIER_OPA;
  if (!resolved) {
    resolved = execFileSync("bash", [join(PROJECT_ROOT, "tools", "ensure-opa.sh")], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    }).trim();
  }
  return resolved;
}

export interface OpaRun {
  code: number;
  stdout: string;
  stderr: string;
}

const START_PROBLEMS: Record<string, string> = {
  ENOENT: "no such file",
  EACCES: "not executable (permission denied)",
  ENOTDIR: "a path component is not a folder",
  EISDIR: "a folder, not a program",
};

/** Runs opa; resolves with its exit code and output, rejects (naming the path and cause) when it cannot start. */
export function runOpa(opa: string, args: string[], cwd = PROJECT_ROOT): Promise<OpaRun> {
  return new Promise((resolve, reject) => {
    execFile(opa, args, { cwd, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = codeOf(err);
      if (typeof code === "string" && code !== "ERR_CHILD_PROCESS_STDIO_MAXBUFFER") {
        const cause = START_PROBLEMS[code] ?? messageOf(err);
        reject(
          new Error(
            `cannot run opa "${opa}": ${cause} (${code}); pass --opa PATH or set PORTIER_OPA to the pinned opa binary`,
          ),
        );
        return;
      }
      resolve({ code: err ? (typeof code === "number" ? code : 1) : 0, stdout, stderr });
    });
  });
}
