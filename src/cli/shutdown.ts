/**
 * Process signals for the long-running commands (serve, dev, issuer): the first SIGTERM or SIGINT starts a
 * graceful stop; a second one ends the process at once (exit 2: the stop did not finish) unless the caller
 * asks to ignore it (cluster workers, which get the terminal's Ctrl-C and the primary's shutdown message together).
 */
import { EXIT } from "./exit-codes.js";

const SIGNALS = ["SIGTERM", "SIGINT"] as const;

export function untilSignal(options: { onSecond?: "exit" | "ignore" } = {}): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const first = (signal: NodeJS.Signals) => {
      for (const s of SIGNALS) process.off(s, first);
      // Keep a listener so a later signal does not kill the process by default before the stop finishes.
      const second = (again: NodeJS.Signals) => {
        if (options.onSecond === "ignore") return;
        process.stderr.write(`portier: second ${again} while stopping; exiting now\n`);
        process.exit(EXIT.error);
      };
      for (const s of SIGNALS) process.on(s, second);
      resolve(signal);
    };
    for (const s of SIGNALS) process.on(s, first);
  });
}
