/**
 * One `portier` command line run to its exit code, printing what the command prints: the sub-command loaded on
 * demand from ./commands, a usage or help request and any error turned into output and a code (exit-codes.ts:
 * 0 success, 1 the command's finding, 2 the command could not answer; an error is one line, no stack trace).
 * main.ts runs it for the process; tests run it in process.
 */
import { packageVersion } from "../files/package-version.js";
import { failureOf } from "./failure.js";
import { EXIT } from "./exit-codes.js";
import { didYouMean } from "../text/did-you-mean.js";

type Command = { run(argv: string[]): Promise<number> };

/** Each sub-command: its one-line description and its module, imported only when it runs. */
const COMMANDS: Record<string, [string, () => Promise<Command>]> = {
  serve: ["run the decision service", () => import("./commands/serve.js")],
  dev: ["run the local issuer and the decision service with sample data", () => import("./commands/dev.js")],
  issuer: ["run the local identity issuer (development only)", () => import("./commands/issuer.js")],
  explain: ["explain one decision of the compiled policy", () => import("./commands/explain.js")],
  matrix: ["print the route x role access matrix", () => import("./commands/matrix.js")],
  diff: ["list grants gained or lost between two policies", () => import("./commands/diff.js")],
  replay: ["what a candidate policy would change in a real decision log", () => import("./commands/replay.js")],
  review: ["review a policy change for a pull request (review BASE [HEAD])", () => import("./commands/review.js")],
  test: ["run the policy tests with coverage", () => import("./commands/test.js")],
  bundle: ["build the wasm policy bundle (bundle build)", () => import("./commands/bundle.js")],
  data: ["validate data/ (data check | data build)", () => import("./commands/data.js")],
  directory: ["seal an NDJSON synced-users file (directory seal FILE)", () => import("./commands/directory.js")],
  "id-token": ["validate an ID token for a client (id-token validate)", () => import("./commands/id-token.js")],
  token: ["print a user access token for a sample user from the local issuer", () => import("./commands/token.js")],
  init: ["scaffold a policy project that builds, tests and serves (init DIR)", () => import("./commands/init.js")],
};

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  return [
    "usage: portier <command> [options]",
    "",
    "commands:",
    ...Object.entries(COMMANDS).map(([c, [d]]) => `  ${c.padEnd(width)}  ${d}`),
    "",
    "Run `portier <command> --help` for the options of a command; `portier --version` for the version.",
  ].join("\n");
}

function version(): string {
  return `portier ${packageVersion()}`;
}

async function dispatch(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "--help" || name === "-h" || name === "help") {
    console.log(usage());
    return 0;
  }
  if (name === "--version" || name === "-v") {
    console.log(version());
    return 0;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) {
    const hint = didYouMean(name, Object.keys(COMMANDS), (c) => c);
    console.error(`portier: unknown command "${name}"${hint}; portier --help lists the commands`);
    return EXIT.error;
  }
  return (await command[1]()).run(rest);
}

/** Runs the command line; never rejects. */
export async function runCommand(argv: string[]): Promise<number> {
  try {
    return await dispatch(argv);
  } catch (err: unknown) {
    // By class (src/cli/failure.ts): a help request prints and exits 0, any other error exits 2.
    const failure = failureOf(err);
    if (failure.stdout !== undefined) console.log(failure.stdout);
    if (failure.stderr !== undefined) console.error(failure.stderr);
    return failure.exitCode;
  }
}
