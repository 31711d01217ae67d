/**
 * Plain HTTP servers a test starts on 127.0.0.1 (port 0) to be fetched from: `serve` answers with the handler
 * and gives the server's `host:port`; `closeAll` (in afterEach) closes every one, its open connections too.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface LocalServers {
  serve: (handler: (req: IncomingMessage, res: ServerResponse) => void) => Promise<string>;
  closeAll: () => Promise<void>;
}

export function localServers(): LocalServers {
  const open: Server[] = [];
  return {
    async serve(handler) {
      const server = createServer(handler);
      open.push(server);
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      return `127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    async closeAll() {
      await Promise.all(open.splice(0).map((s) => new Promise((r) => (s.closeAllConnections(), s.close(r)))));
    },
  };
}
