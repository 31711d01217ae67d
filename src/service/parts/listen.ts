/**
 * Binds an HTTP server to host:port; a failure is a start-up failure naming the option that fixes it.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { listenFailure } from "../start-error.js";

/** The server's URL once it listens. */
export async function listenHttp(server: Server, port: number, host: string): Promise<string> {
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (err) {
    throw listenFailure(err as NodeJS.ErrnoException, host, port);
  }
  const addr = server.address() as AddressInfo;
  return `http://${addr.address.includes(":") ? `[${addr.address}]` : addr.address}:${addr.port}`;
}
