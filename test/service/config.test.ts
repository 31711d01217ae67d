/**
 * loadConfig in process: the documented schema (docs/config.schema.json) is the schema in use, the example
 * config loads, errors name where a value came from (flag, PORTIER_* variable, file key) and suggest the
 * nearest known name, and the directory rule (--directory, --roles-claim or an explicit --no-directory).
 */
import { describe, expect, it } from "vitest";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv } from "ajv";
import { ConfigError, loadConfig, configSchemaDocument } from "../../src/service/config.js";
import { PROJECT_ROOT, tempDir } from "./helpers.js";

const SCHEMA_FILE = join(PROJECT_ROOT, "docs", "config.schema.json");
const EXAMPLE_FILE = join(PROJECT_ROOT, "docs", "portier.example.json");
const BASE = ["--issuer", "https://auth.example", "--no-directory"];

function problems(argv: string[], env: NodeJS.ProcessEnv = {}): string[] {
  try {
    loadConfig(argv, env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

function configFile(content: unknown): string {
  const file = join(tempDir(), "portier.json");
  writeFileSync(file, JSON.stringify(content));
  return file;
}

describe("the config file's documentation", () => {
  it(
    "docs/config.schema.json is the schema loadConfig validates with (regenerate: npx tsx " +
      "tools/write-config-schema.ts)",
    () => {
      expect(JSON.parse(readFileSync(SCHEMA_FILE, "utf8"))).toEqual(configSchemaDocument());
    },
  );

  it("docs/portier.example.json is valid against that schema and loads", () => {
    const example = JSON.parse(readFileSync(EXAMPLE_FILE, "utf8")) as Record<string, unknown>;
    const validate = new Ajv({ allErrors: true }).compile(JSON.parse(readFileSync(SCHEMA_FILE, "utf8")));
    expect(validate.errors ?? validate(example)).toBe(true);
    const config = loadConfig(["--config", EXAMPLE_FILE], {});
    expect(config).toMatchObject({
      issuer: example.issuer,
      directory: example.directory,
      workers: example.workers,
      shutdownTimeout: example.shutdownTimeout,
    });
  });
});

describe("errors name the source and suggest the nearest name", () => {
  it.each([
    [["--port", "abc"], {}, 'config.port: must be integer (from --port "abc")'],
    [[], { PORTIER_PORT: "abc" }, 'config.port: must be integer (from PORTIER_PORT="abc")'],
    [
      [],
      { PORTIER_SHUTDOWN_TIMEOUT: "-1" },
      'config.shutdownTimeout: must be >= 0 (from PORTIER_SHUTDOWN_TIMEOUT="-1")',
    ],
    [
      [],
      { PORTIER_BUNDLE_URL: "ftp://u:hunter2@bundles.example/b.tar.gz" },
      'config.bundleUrl: must match pattern "^https?://" (from ' +
        'PORTIER_BUNDLE_URL="ftp://***@bundles.example/b.tar.gz")',
    ],
    [["--directroy", "users.json"], {}, "config: unknown option '--directroy' (did you mean --directory?)"],
    [["--shutdown-timout", "3"], {}, "config: unknown option '--shutdown-timout' (did you mean --shutdown-timeout?)"],
    [
      ["--verification-alg", "none"],
      {},
      "config.verificationAlg: must be one of RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384, ES512, EdDSA " +
        '(from --verification-alg "none")',
    ],
  ] as const)("%j %j -> %s", (argv, env, problem) => {
    expect(problems([...BASE, ...argv], env)).toEqual([problem]);
  });

  it("a config file: a bad value names the file and key; an unknown key suggests the nearest known one", () => {
    const file = configFile({ port: "x", bundelUrl: "https://b.example/b.tar.gz", colour: true });
    expect(problems([...BASE, "--config", file])).toEqual([
      `config: unknown option "bundelUrl" in ${file} (did you mean "bundleUrl"?); the keys are listed in ` +
        `docs/config.schema.json`,
      `config: unknown option "colour" in ${file}; the keys are listed in docs/config.schema.json`,
      `config.port: must be integer (from ${file}: port: "x")`,
    ]);
  });

  it("a missing issuer names the flag, the variable and the key", () => {
    expect(problems(["--no-directory"])).toEqual([
      'config.issuer: is required (--issuer, PORTIER_ISSUER or "issuer" in the config file)',
    ]);
  });
});

describe("who decides a user's roles", () => {
  it.each([
    [
      [],
      {},
      new RegExp(
        String.raw`^config: neither --directory nor --roles-claim is set, so every user call would be ` +
          String.raw`denied \(not_synced\); ` +
          String.raw`pass --directory FILE \(or --directory-url URL\) or --roles-claim NAME, or --no-directory for ` +
          String.raw`an application-only deployment$`,
      ),
    ],
    [["--no-directory", "--directory", "u.json"], {}, /^config.noDirectory: cannot be combined with --directory/],
    [
      ["--roles-claim", "roles"],
      { PORTIER_NO_DIRECTORY: "true" },
      /^config.noDirectory: cannot be combined with --roles-claim/,
    ],
    [
      ["--directory", "u.json", "--directory-url", "https://feed.example/u.ndjson"],
      {},
      new RegExp(
        String.raw`^config.directoryUrl: cannot be combined with --directory \(one source of synced ` +
          String.raw`users: a file or a URL\); ` +
          String.raw`drop one of them$`,
      ),
    ],
    [
      ["--directory-url", "https://feed.example/u.ndjson"],
      { PORTIER_DIRECTORY: "u.json" },
      /^config.directoryUrl: cannot be combined with --directory/,
    ],
    [
      ["--no-directory", "--directory-url", "https://feed.example/u.ndjson"],
      {},
      /^config.noDirectory: cannot be combined with --directory-url/,
    ],
    [
      ["--directory-url", "ftp://feed.example/u.ndjson"],
      {},
      new RegExp(
        String.raw`^config.directoryUrl: must match pattern "\^https\?:\/\/" \(from --directory-url ` +
          String.raw`"ftp:\/\/feed.example\/u.ndjson"\)$`,
      ),
    ],
    [
      ["--directory-url", "https://feed.example/u.ndjson", "--directory-max-bytes", "4294967296"],
      {},
      /^config.directoryMaxBytes: must be <= 3221225472/,
    ],
  ] as const)("%j %j is refused", (argv, env, problem) => {
    const found = problems(["--issuer", "https://auth.example", ...argv], env);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(problem);
  });

  it.each([
    [["--directory", "users.json"], {}],
    [["--roles-claim", "roles"], {}],
    [["--directory-url", "https://feed.example/u.ndjson"], {}],
    [["--no-directory"], {}],
    [[], { PORTIER_NO_DIRECTORY: "true" }],
  ] as const)("%j %j is accepted", (argv, env) => {
    expect(problems(["--issuer", "https://auth.example", ...argv], env)).toEqual([]);
  });

  it("defaults: shutdown timeout 10 s, keys in the background", () => {
    expect(loadConfig(BASE, {})).toMatchObject({
      shutdownTimeout: 10,
      shutdownDelay: 0,
      requireKeysAtStart: false,
      noDirectory: true,
    });
  });

  it("--workers defaults to one process, whatever the host's cores (a container or sidecar scales by replicas)", () => {
    expect(loadConfig(BASE, {}).workers).toBe(1);
    expect(loadConfig([...BASE, "--workers", "3"], {}).workers).toBe(3);
  });

  // The timeout bounds the whole stop, the delay included: a delay must leave time to answer what was accepted.
  const tooLong = (timeout: number) => [
    `config.shutdownDelay: must be less than config.shutdownTimeout (${timeout}), which bounds the whole stop: the ` +
      `delay, then answering the requests accepted; raise --shutdown-timeout (e.g. to the delay + 10)`,
  ];
  it.each([
    [["--shutdown-delay", "10"], tooLong(10)],
    [["--shutdown-delay", "5", "--shutdown-timeout", "5"], tooLong(5)],
    [["--shutdown-delay", "0.5", "--shutdown-timeout", "0"], tooLong(0)],
    [["--shutdown-delay", "5", "--shutdown-timeout", "15"], []],
    [["--shutdown-delay", "0", "--shutdown-timeout", "0"], []],
    [["--shutdown-delay=-1"], ['config.shutdownDelay: must be >= 0 (from --shutdown-delay "-1")']],
  ] as const)("%j -> %j", (argv, expected) => {
    expect(problems([...BASE, ...argv], {})).toEqual(expected);
  });
});

describe(
  "switches: --NAME sets, --no-NAME clears; the old " + "true|false spelling is accepted with a deprecation line",
  () => {
    const load = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
      const said: string[] = [];
      const config = loadConfig([...BASE, ...argv], env, (line) => said.push(line));
      return { config, said };
    };

    it.each([
      [[], true],
      [["--watch"], true],
      [["--no-watch"], false],
    ])("%j gives watch %s with nothing said", (argv, watch) => {
      expect(load(argv)).toEqual({ config: expect.objectContaining({ watch }) as unknown, said: [] });
    });

    it.each([
      [["--watch", "false"], false, "--no-watch"],
      [["--watch=false"], false, "--no-watch"],
      [["--watch", "true"], true, "--watch"],
      [["--allow-directory-shrink", "true"], true, "--allow-directory-shrink"],
    ])("%j still works, and says to write %s", (argv, value, now) => {
      const { config, said } = load(argv);
      expect(argv[0]!.startsWith("--allow") ? config.allowDirectoryShrink : config.watch).toBe(value);
      expect(said).toEqual([expect.stringMatching(new RegExp(`deprecated .*: write ${now}$`))]);
    });

    it("the environment and the file take true and false (ajv coerces the environment's strings)", () => {
      expect(load([], { PORTIER_WATCH: "false", PORTIER_PORT: "9000" }).config).toMatchObject({
        watch: false,
        port: 9000,
      });
      expect(load(["--config", configFile({ watch: false, allowDirectoryShrink: true })]).config).toMatchObject({
        watch: false,
        allowDirectoryShrink: true,
      });
    });

    it("refuses a value that is not a boolean, naming where it came from", () => {
      expect(problems([...BASE, "--watch=maybe"])).toEqual(["config: --watch is a switch and takes no value"]);
      expect(problems(BASE, { PORTIER_WATCH: "maybe" })).toEqual([
        'config.watch: must be boolean (from PORTIER_WATCH="maybe")',
      ]);
      // --no-directory has no --no- form of its own, so "false" is refused rather than guessed.
      expect(problems(["--issuer", "https://auth.example", "--roles-claim", "r", "--no-directory", "false"])).toEqual([
        'config: --no-directory is a switch: leave it out instead of "false"',
      ]);
    });

    it(
      "each default is written once, in the schema: " + "the loaded configuration and docs/config.schema.json agree",
      () => {
        const config = loadConfig(["--issuer", "https://auth.example", "--roles-claim", "roles"], {});
        const schema = JSON.parse(readFileSync(SCHEMA_FILE, "utf8")) as {
          properties: Record<string, { default?: unknown }>;
        };
        for (const [key, property] of Object.entries(schema.properties))
          if ("default" in property)
            expect([key, (config as Record<string, unknown>)[key]]).toEqual([key, property.default]);
        expect(schema.properties.bundleMaxBytes?.default).toBe(64 * 1024 * 1024);
      },
    );
  },
);
