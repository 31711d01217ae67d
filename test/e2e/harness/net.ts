/**
 * Loopback networking helpers for the end-to-end tests: pick a free ephemeral port on 127.0.0.1, and
 * wait (bounded) until something accepts TCP connections on a port.
 */
import { createConnection, type AddressInfo, type Server as NetServer } from "node:net";
import type { Server as HttpServer } from "node:http";

export const LOOPBACK = "127.0.0.1";

export { freePort } from "../../support/free-port.js";

function tryConnect(port: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const socket = createConnection({ host: LOOPBACK, port });
    const done = (ok: boolean) => {
      socket.removeAllListeners();
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

/**
 * Polls until 127.0.0.1:port accepts a connection. `failed` is checked between attempts so a process that
 * died during start-up is reported at once instead of after the timeout.
 */
export async function waitForPort(
  port: number,
  opts: { timeoutMs: number; what: string; failed?: () => string | undefined },
): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    const failure = opts.failed?.();
    if (failure !== undefined) throw new Error(`${opts.what}: ${failure}`);
    if (await tryConnect(port)) return;
    if (Date.now() > deadline) {
      throw new Error(`${opts.what}: nothing accepted connections on ${LOOPBACK}:${port} within ${opts.timeoutMs} ms`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Starts a server on a free loopback port; returns the port and a close that ends open HTTP connections. */
export async function listenOnLoopback(
  server: HttpServer | NetServer,
): Promise<{ port: number; close: () => Promise<void> }> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, LOOPBACK, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        if ("closeAllConnections" in server) server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
