/**
 * startIssuer listens only once it can answer: a request sent while its signing key is being generated is
 * refused (and retried by the client) rather than accepted and left waiting for ever.
 */
import { request } from "node:http";
import { describe, expect, it, vi } from "vitest";
import { freePort, LOOPBACK } from "../e2e/harness/net.js";
import { until } from "../support/until.js";

// Key generation is held until the test releases it, so "during key generation" is a window the test controls.
const keyGen = vi.hoisted(() => {
  let release!: () => void;
  let started!: () => void;
  return {
    gate: new Promise<void>((r) => (release = r)),
    started: new Promise<void>((r) => (started = r)),
    release: () => release(),
    markStarted: () => started(),
  };
});

vi.mock("../../src/issuer/keys.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../src/issuer/keys.js")>();
  return {
    ...original,
    createKeyRing: async () => {
      keyGen.markStarted();
      await keyGen.gate;
      return original.createKeyRing();
    },
  };
});

const { startIssuer } = await import("../../src/issuer/index.js");

type Attempt = { status: number } | { refused: true } | { hung: true };

/** One GET; a connection that is accepted but not answered within `waitMs` counts as hung. */
function attempt(port: number, path: string, waitMs: number): Promise<Attempt> {
  return new Promise((resolve) => {
    const req = request({ host: LOOPBACK, port, path, agent: false }, (res) => {
      res.resume();
      resolve({ status: res.statusCode ?? 0 });
    });
    req.setTimeout(waitMs, () => {
      req.destroy();
      resolve({ hung: true });
    });
    req.on("error", (err: NodeJS.ErrnoException) =>
      resolve(err.code === "ECONNREFUSED" ? { refused: true } : { hung: true }),
    );
    req.end();
  });
}

/** What a client does: retry while refused, give up when an accepted connection is not answered. */
async function getWithRetry(
  port: number,
  path: string,
  attempts: Attempt[] = [],
): Promise<{ attempts: Attempt[]; last: Attempt }> {
  for (;;) {
    const a = await attempt(port, path, 5000);
    attempts.push(a);
    if (!("refused" in a)) return { attempts, last: a };
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("startIssuer", () => {
  it("refuses connections during key generation and answers the request once ready", async () => {
    const port = await freePort();
    const starting = startIssuer({ port });
    await keyGen.started;
    const during = await attempt(port, "/.well-known/openid-configuration", 1000);
    const tried: Attempt[] = [];
    const client = getWithRetry(port, "/.well-known/openid-configuration", tried);
    // The client has been refused at least once while the keys are generated (polled, not a fixed time).
    await until(() => tried.some((a) => "refused" in a));
    keyGen.release();
    const running = await starting;
    try {
      const { attempts, last } = await client;
      expect(during).toEqual({ refused: true });
      expect(attempts.length).toBeGreaterThan(1);
      expect(last).toEqual({ status: 200 });
    } finally {
      await running.close();
    }
  }, 20_000);
});
