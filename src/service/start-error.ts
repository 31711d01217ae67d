/**
 * A start-up failure: one line naming what is wrong and what to do (the CLI prints it and exits 2).
 */
import { PortierError } from "../errors/portier-error.js";

export class StartError extends PortierError {
  static override readonly code = "start_failed";
}

/** A port that cannot be bound, worded with the option that fixes it. */
export function listenFailure(err: NodeJS.ErrnoException, host: string, port: number): StartError {
  const where = `${host}:${port}`;
  if (err.code === "EADDRINUSE")
    return new StartError(
      `cannot listen on ${where}: the address is in use by another process; stop it or choose another --port`,
    );
  if (err.code === "EACCES")
    return new StartError(`cannot listen on ${where}: permission denied; choose a --port above 1023`);
  if (err.code === "EADDRNOTAVAIL")
    return new StartError(`cannot listen on ${where}: no such local address; check --host`);
  return new StartError(`cannot listen on ${where}: ${err.message}`);
}
