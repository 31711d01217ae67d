/**
 * A free ephemeral TCP port on 127.0.0.1, for servers a test or benchmark starts (one helper for all of them).
 */
import { createServer } from "node:net";

/** Listens on port 0, reads the port the kernel chose, closes, and returns it. */
export async function freePort(): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      if (address === null || typeof address === "string") {
        server.close();
        reject(new Error("freePort: no TCP address"));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}
