/**
 * `portier issuer` as a process: warns it is for development only, prints its URL, serves discovery,
 * stops cleanly on SIGTERM; bad arguments exit 2.
 */
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { PORTIER_BIN } from "../support/portier-bin.js";

// Through main, which turns usage errors into exit 2.

function launch(args: string[]) {
  return spawn(process.execPath, [PORTIER_BIN, "issuer", ...args], {
    env: { ...process.env, LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

describe("portier issuer command", () => {
  it("starts on loopback, says it is not for production, prints the URL and stops on SIGTERM", async () => {
    const child = launch(["--port", "0", "--access-ttl", "600"]);
    let out = "";
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no URL printed: ${out}`)), 20_000);
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        const match = /Issuer URL: (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (match?.[1]) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      });
      child.once("exit", (code) => reject(new Error(`exited early (${code}): ${out}`)));
    });
    try {
      expect(out).toMatch(/development only/i);
      expect(out).toMatch(/not for production/i);
      const meta = (await (await fetch(`${url}/.well-known/openid-configuration`)).json()) as { issuer: string };
      expect(meta.issuer).toBe(url);
      const token = await fetch(`${url}/connect/token`, {
        method: "POST",
        body: new URLSearchParams({
          grant_type: "client_credentials",
          client_id: "portier-demo-machine",
          client_secret: "portier-demo-secret",
          scope: "apiclients",
        }),
      });
      expect(((await token.json()) as { expires_in: number }).expires_in).toBe(600);
    } finally {
      const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
    }
  });

  it("exits 2 on a bad argument, one line pointing to --help", async () => {
    const child = launch(["--port", "abc"]);
    let err = "";
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    expect(code).toBe(2);
    expect(err).toBe("portier: --port must be an integer, got abc; portier issuer --help lists the options\n");
  });
});
