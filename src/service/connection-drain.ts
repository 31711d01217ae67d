/**
 * Stopping a server without losing a request: stop accepting only after every connection the kernel already
 * completed has been accepted, then answer every accepted connection (one that has not sent its request yet
 * gets the chance to), close a keep-alive connection only while it is idle with nothing received since its last
 * answer, and cut what is left at a deadline.
 *
 * Node's own `http.Server#close()` is not used to stop accepting: it also calls `closeIdleConnections()`, which
 * on newer Node versions closes connections that were accepted but whose request has not arrived yet, and it
 * stops the sweep that enforces the headers and request timeouts. `net.Server#close()` only closes the listener.
 */
import type { IncomingMessage, Server as HttpServer, ServerResponse } from "node:http";
import { Server as NetServer, type Socket } from "node:net";

/** The listener closes once no connection has been accepted for this long... */
const QUIET_MS = 50;
/** ...or after this long, under a steady stream of new connections. */
const MAX_ACCEPT_MS = 1000;

/**
 * Accepts what already connected, then closes the listening socket: once a QUIET_MS wait and the event-loop
 * poll right after it accepted nothing, at most MAX_ACCEPT_MS. Not "as soon as one event-loop pass accepts
 * nothing": on a CPU-starved host connections reached the accept queue one per pass, and a pass finding none
 * did not mean none were left; and a timer alone is not enough either, since a process that was not scheduled
 * runs its timers before it polls. A connection the kernel completes after the close is reset by it: the only
 * connections a stop can lose are those that race it (no interface closes a listening socket without
 * resetting its queue).
 */
export async function stopAccepting(server: NetServer): Promise<void> {
  if (!server.listening) return;
  let accepted = 0;
  const onConnection = () => void accepted++;
  server.on("connection", onConnection);
  const end = Date.now() + MAX_ACCEPT_MS;
  try {
    do {
      accepted = 0;
      await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
      // setImmediate after a timer runs after the poll of the same loop iteration.
      await new Promise((resolve) => setImmediate(resolve));
    } while (accepted > 0 && Date.now() < end);
  } finally {
    server.off("connection", onConnection);
  }
  // The listener only (see the header comment); the connections stay open.
  NetServer.prototype.close.call(server);
}

interface Connection {
  requests: number;
  answered: number;
  /** socket.bytesRead when its last answer finished: more since then is a request arriving. */
  bytesAtAnswer: number;
}

/** The decision server's connections, tracked from their accept to their close, for a stop that loses none. */
export class ConnectionDrain {
  private readonly open = new Map<Socket, Connection>();
  private closingIdle = false;
  private idleScheduled = false;
  private emptied: (() => void) | undefined;

  constructor(private readonly server: HttpServer) {
    const open = this.open;
    const closingIdle = (): void => {
      if (this.closingIdle) this.scheduleIdleClose();
    };
    // One shared function per event (no closure per request on the hot path).
    function answered(this: ServerResponse): void {
      const c = open.get(this.req.socket);
      if (!c) return;
      c.answered++;
      c.bytesAtAnswer = this.req.socket.bytesRead;
      closingIdle();
    }
    server.on("connection", (socket: Socket) => {
      open.set(socket, { requests: 0, answered: 0, bytesAtAnswer: 0 });
      socket.once("close", () => {
        open.delete(socket);
        if (open.size === 0) this.emptied?.();
      });
    });
    server.on("request", (req: IncomingMessage, res: ServerResponse) => {
      const c = open.get(req.socket);
      if (!c) return;
      c.requests++;
      res.once("close", answered);
    });
  }

  /** Connections open now. */
  get size(): number {
    return this.open.size;
  }

  /**
   * From now on (the listener is closed), idle keep-alive connections are closed: now and whenever an answer
   * leaves one idle. Resolves when every connection is closed, or at `deadline` (ms since the epoch) after
   * cutting the ones still open. A connection that has not sent its first request is never idle here: it is
   * kept until it sends one (then answered with Connection: close) or the headers timeout ends it.
   */
  async drain(deadline: number): Promise<void> {
    this.closingIdle = true;
    this.scheduleIdleClose();
    if (this.open.size > 0) {
      await new Promise<void>((resolve) => {
        const cut = setTimeout(
          () => {
            for (const socket of this.open.keys()) socket.destroy();
          },
          Math.max(0, deadline - Date.now()),
        );
        this.emptied = () => {
          clearTimeout(cut);
          resolve();
        };
      });
    }
    // Nothing is open and the listener is closed: this only stops node:http's timeout sweep.
    this.server.close();
  }

  /**
   * Closes the idle keep-alive connections in the check phase, right after the event loop polled their
   * sockets, so a request already received has been read (bytesRead moved on) and is answered instead.
   */
  private scheduleIdleClose(): void {
    if (this.idleScheduled) return;
    this.idleScheduled = true;
    setImmediate(() => {
      this.idleScheduled = false;
      for (const [socket, c] of this.open) {
        if (c.requests > 0 && c.answered === c.requests && socket.bytesRead === c.bytesAtAnswer) socket.destroy();
      }
    });
  }
}
