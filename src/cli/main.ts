#!/usr/bin/env node
/**
 * The `portier` command: one sub-command per file in ./commands, loaded on demand. Errors are printed
 * as one line (no stack trace); usage errors exit 2, other failures 1.
 */

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
  return ["usage: portier <command> [options]", "", ...Object.entries(COMMANDS).map(([c, d]) => `  ${c.padEnd(width)}  ${d}`)].join("\n");
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "--help" || name === "-h" || name === "help") {
    console.log(usage());
    return name ? 0 : 2;
  }
  if (!(name in COMMANDS)) {
    console.error(`portier: unknown command "${name}"\n${usage()}`);
    return 2;
  }
  const mod = (await import(`./commands/${name}.js`)) as { run(argv: string[]): Promise<number> };
  return mod.run(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    const e = err as { message?: string; code?: unknown };
    console.error(`portier: ${e?.message ?? String(err)}`);
    process.exitCode = e?.code === "usage" ? 2 : 1;
  },
);
