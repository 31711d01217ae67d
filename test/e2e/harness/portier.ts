/**
 * The real Portier processes for the end-to-end tests, run from source like a user would
 * (`node dist/cli/main.js <command>`, the compiled CLI): the local issuer and the decision service, each on
 * 127.0.0.1 with --port 0, ready once it prints its URL (a JSON log line with msg "listening" and url,
 * or the issuer's "Issuer URL: ..." banner). Stopped by process group.
 */
import { join } from "node:path";
import { PROJECT_ROOT } from "../../../src/toolchain/project-root.js";
import { startProcess, waitForLine, type Managed } from "./process.js";
import { PORTIER_BIN } from "../../support/portier-bin.js";

export const SAMPLE_DIRECTORY = join(PROJECT_ROOT, "data", "sample", "directory.json");

export interface RunningPortier {
  url: string;
  port: number;
  proc: Managed;
  stop(): Promise<void>;
}

/** Reads the listening URL from one stdout line, whichever of the two forms it has. */
export function listeningUrl(line: string): string | undefined {
  const trimmed = line.trim();
  if (trimmed.startsWith("{")) {
    try {
      const record = JSON.parse(trimmed) as { msg?: unknown; url?: unknown };
      if (record.msg === "listening" && typeof record.url === "string") return record.url.replace(/\/$/, "");
    } catch {
      return undefined;
    }
    return undefined;
  }
  return /^Issuer URL: (http:\/\/127\.0\.0\.1:\d+)/.exec(trimmed)?.[1];
}

/** `env`: more environment variables (OTEL_* for the tracing tests). */
export async function startPortier(
  command: "issuer" | "serve",
  args: string[],
  timeoutMs = 45_000,
  env: Record<string, string> = {},
): Promise<RunningPortier> {
  const proc = startProcess(`portier ${command}`, process.execPath, [PORTIER_BIN, command, ...args], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, LOG_LEVEL: process.env["LOG_LEVEL"] ?? "info", NO_COLOR: "1", ...env },
  });
  let url: string;
  try {
    url = await waitForLine(proc, listeningUrl, timeoutMs);
  } catch (err) {
    await proc.stop();
    throw err;
  }
  const port = Number(new URL(url).port);
  if (new URL(url).hostname !== "127.0.0.1") {
    await proc.stop();
    throw new Error(`portier ${command} listens on ${url}, not on loopback`);
  }
  return { url, port, proc, stop: () => proc.stop() };
}

export function startIssuerProcess(extra: string[] = []): Promise<RunningPortier> {
  return startPortier("issuer", ["--port", "0", "--host", "127.0.0.1", ...extra]);
}

export function startServiceProcess(
  issuerUrl: string,
  extra: string[] = [],
  env: Record<string, string> = {},
): Promise<RunningPortier> {
  return startPortier(
    "serve",
    [
      "--port",
      "0",
      "--host",
      "127.0.0.1",
      "--workers",
      "1",
      "--issuer",
      issuerUrl,
      "--directory",
      SAMPLE_DIRECTORY,
      ...extra,
    ],
    undefined,
    env,
  );
}
