#!/usr/bin/env node
/**
 * The `portier` command: one sub-command per file in ./commands, loaded on demand. Errors are printed
 * as one line (no stack trace); exit codes: 0 done, 1 failure (a start-up failure, a deny, a change), 2 usage
 * or configuration error. The process exits as soon as the command is done, so nothing left open can keep
 * it alive.
 */
import { readFileSync } from "node:fs";
import { failureOf } from "./failure.js";

const COMMANDS: Record<string, string> = {
  serve: "run the decision service",
  dev: "run the local issuer and the decision service with sample data",
  issuer: "run the local identity issuer (development only)",
  explain: "explain one decision of the compiled policy",
  matrix: "print the route x role access matrix",
  diff: "list grants gained or lost between two policies",
  replay: "what a candidate policy would change in a real decision log",
  test: "run the policy tests with coverage",
  bundle: "build the wasm policy bundle (bundle build)",
  data: "validate data/ (data check | data build)",
  "id-token": "validate an ID token for a client (id-token validate)",
};

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  return [
    "usage: portier <command> [options]",
    "",
    "commands:",
    ...Object.entries(COMMANDS).map(([c, d]) => `  ${c.padEnd(width)}  ${d}`),
    "",
    "Run `portier <command> --help` for the options of a command; `portier --version` for the version.",
  ].join("\n");
}

function version(): string {
  // src/cli/main.ts and dist/cli/main.js are both two folders below package.json.
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  return `portier ${pkg.version}`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "--help" || name === "-h" || name === "help") {
    console.log(usage());
    return 0;
  }
  if (name === "--version" || name === "-v") {
    console.log(version());
    return 0;
  }
  if (!Object.hasOwn(COMMANDS, name)) {
    console.error(`portier: unknown command "${name}"\n${usage()}`);
    return 2;
  }
  const mod = (await import(`./commands/${name}.js`)) as { run(argv: string[]): Promise<number> };
  return mod.run(rest);
}

/**
 * Exits once stdout and stderr are flushed: when they are pipes, writes are asynchronous, and an immediate
 * process.exit() would cut off what a command printed last (its closing line, under load).
 */
function exit(code: number): void {
  process.stdout.write("", () => process.stderr.write("", () => process.exit(code)));
}

main(process.argv.slice(2)).then(
  (code) => exit(code),
  (err: unknown) => {
    const failure = failureOf(err);
    if (failure.stdout !== undefined) console.log(failure.stdout);
    if (failure.stderr !== undefined) console.error(failure.stderr);
    exit(failure.exitCode);
  },
);
