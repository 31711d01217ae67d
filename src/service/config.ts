/**
 * Service configuration: flags, then PORTIER_* environment variables, then an optional JSON file, then
 * defaults; validated with ajv so each bad option is reported by its path and by where it came from
 * (config.port: must be integer (from PORTIER_PORT="abc")). One table, OPTIONS, gives each option's flag,
 * description and JSON schema, whose `default` is the option's default, written there only: ajv fills the
 * defaults and coerces flag and environment strings (coerceTypes, useDefaults); the same table renders
 * `portier serve --help` (SERVICE_OPTIONS), is the JSON Schema of the config file (docs/config.schema.json, from
 * which the option reference is generated) and, through its types, ServiceConfig. An option without a value is a
 * switch: `--watch` sets it, `--no-watch` clears it. A policy project (--project DIR, else the current folder when
 * it holds data/routes.json) brings its own configuration: DIR/portier.json, the same keys as a config file and
 * below it (flags, environment, --config, portier.json, defaults), its relative paths read from DIR, and its
 * bundle DIR/build/bundle.tar.gz by default.
 */
import { existsSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { codeOf, messageOf } from "../errors/caught.js";
import { PortierError } from "../errors/portier-error.js";
import { InputFileError, readInputFileSync } from "../files/read-input-file.js";
import { Ajv } from "ajv";
import { redactUrls } from "../reload/index.js";
import { didYouMean } from "../text/did-you-mean.js";
import { SIGNING_ALGS } from "../engine/index.js";
import { operatorLabels } from "./decision-logs/labels.js";

export const DEFAULT_BUNDLE = fileURLToPath(new URL("../../build/bundle.tar.gz", import.meta.url));

/** The largest --config file: far above any real one (every option set is a few KiB). */
const MAX_CONFIG_FILE_BYTES = 1024 * 1024;

export class ConfigError extends PortierError {
  static override readonly code = "config";
  constructor(readonly problems: string[]) {
    super(problems.join("\n"));
  }
}

interface ServiceOption {
  /** The value's placeholder in --help (FILE, N); an option without one is a switch (--NAME, --no-NAME). */
  value?: string;
  description: string;
  /** What --help says when the option has no default value (its schema has no `default`). */
  unset?: string;
  /** The value's JSON schema; its `default` is the option's default. */
  schema: Record<string, unknown>;
}

/** Every option of `portier serve`, by flag name; the config-file key and env variable derive from it. */
export const OPTIONS = {
  config: {
    value: "FILE",
    description: "a JSON config file (keys: docs/config.schema.json)",
    unset: "none",
    schema: {},
  },
  project: {
    value: "DIR",
    description:
      "a policy project: its portier.json configures the service (below --config; paths in it are the project's) " +
      "and its build/bundle.tar.gz is the bundle",
    unset: "the current folder when it holds data/routes.json",
    schema: { type: "string", minLength: 1 },
  },
  issuer: {
    value: "URL",
    description: "the issuer ({auth_url}); tokens' iss must equal it (required)",
    schema: { type: "string", pattern: "^https?://" },
  },
  jwks: {
    value: "FILE|URL",
    description: "the issuer's keys (JWKS file or URL) instead of OpenID discovery",
    unset: "OpenID discovery from the issuer",
    schema: { type: "string", minLength: 1 },
  },
  "jwks-refresh-seconds": {
    value: "S",
    description: "seconds between re-reads of the JWKS file or URL (a watched file reloads within about a second)",
    schema: { type: "number", minimum: 0.05, maximum: 86400, default: 60 },
  },
  "require-keys-at-start": {
    description:
      "fail the start (exit 2) when the issuer's keys cannot be loaded (otherwise they load in the background and " +
      "/ready answers 503 until then)",
    schema: { type: "boolean", default: false },
  },
  bundle: {
    value: "FILE",
    description: "the compiled policy bundle (watched, hot-swapped)",
    unset: "build/bundle.tar.gz in Portier's own folder",
    schema: { type: "string", minLength: 1 },
  },
  "bundle-max-bytes": {
    value: "N",
    description: "largest bundle download, file and inflated size",
    schema: { type: "integer", minimum: 1024, maximum: 1073741824, default: 67108864 },
  },
  "bundle-url": {
    value: "URL",
    description: "poll a bundle server instead of --bundle (ETag, back-off)",
    unset: "none",
    schema: { type: "string", pattern: "^https?://" },
  },
  "verification-key": {
    value: "FILE",
    description:
      "PEM public key (or certificate) or JWKS file: refuse a bundle (file or --bundle-url) without a valid " +
      "OPA signature (/.signatures.json)",
    unset: "none (bundles are not verified)",
    schema: { type: "string", minLength: 1 },
  },
  "verification-alg": {
    value: "ALG",
    description: "JWS algorithm the --verification-key PEM key signs with (a JWKS key names its own)",
    schema: { enum: [...SIGNING_ALGS], default: "RS256" },
  },
  "bundle-poll-seconds": {
    value: "N",
    description: "seconds between polls of --bundle-url",
    schema: { type: "number", minimum: 0.05, maximum: 86400, default: 30 },
  },
  "shadow-bundle": {
    value: "FILE",
    description:
      "a candidate bundle evaluated after each answer on the same input, never enforced: differences go to " +
      "metrics and the decision log (watched, verified like --bundle)",
    unset: "none",
    schema: { type: "string", minLength: 1 },
  },
  "shadow-bundle-url": {
    value: "URL",
    description: "poll the candidate bundle from a bundle server instead of --shadow-bundle (as --bundle-url)",
    unset: "none",
    schema: { type: "string", pattern: "^https?://" },
  },
  "shadow-sample": {
    value: "0..1",
    description: "share of the policy's decisions the shadow candidate also evaluates",
    schema: { type: "number", minimum: 0, maximum: 1, default: 1 },
  },
  directory: {
    value: "FILE",
    description: "synced users, JSON array or NDJSON of {sub, tenant_id, roles} (watched)",
    unset: "none",
    schema: { type: "string", minLength: 1 },
  },
  "directory-url": {
    value: "URL",
    description: "poll a directory server instead of --directory (ETag, back-off, gzip accepted)",
    unset: "none",
    schema: { type: "string", pattern: "^https?://" },
  },
  "directory-poll-seconds": {
    value: "N",
    description: "seconds between polls of --directory-url",
    schema: { type: "number", minimum: 0.05, maximum: 86400, default: 30 },
  },
  "directory-max-bytes": {
    value: "N",
    description: "largest --directory-url download, on the wire and inflated",
    schema: { type: "integer", minimum: 1024, maximum: 3221225472, default: 2147483648 },
  },
  "directory-max-shrink": {
    value: "0..1",
    description: "largest share of the records a directory reload may drop (more is refused)",
    schema: { type: "number", minimum: 0, maximum: 1, default: 0.5 },
  },
  "allow-directory-shrink": {
    description: "accept any directory shrink, an empty directory included",
    schema: { type: "boolean", default: false },
  },
  "directory-shrink-window-seconds": {
    value: "S",
    description:
      "the shrink guard compares with the largest record count accepted within this window (0: the current index only)",
    schema: { type: "number", minimum: 0, maximum: 31536000, default: 86400 },
  },
  "scim-token-file": {
    value: "FILE",
    description:
      "turn on the SCIM 2.0 service provider at /scim/v2 on the decision port: the identity manager's bearer " +
      "token is this file's content (read again when the file changes); needs --scim-journal or --scim-postgres-url",
    unset: "none (SCIM off)",
    schema: { type: "string", minLength: 1 },
  },
  "scim-journal": {
    value: "FILE",
    description:
      "one process: every accepted SCIM change is appended to this file and flushed before the answer; replayed " +
      "at start",
    unset: "none",
    schema: { type: "string", minLength: 1 },
  },
  "scim-postgres-url": {
    value: "URL",
    description:
      "a fleet: SCIM changes committed to this PostgreSQL database, each replica loading it at start and following " +
      "it (LISTEN/NOTIFY); the password may come from PGPASSWORD instead",
    unset: "none",
    schema: { type: "string", pattern: "^postgres(ql)?://" },
  },
  "scim-sub-attribute": {
    value: "NAME",
    description: "the SCIM user attribute that is the directory record's sub (the token's sub)",
    schema: { enum: ["externalId", "userName", "id"], default: "externalId" },
  },
  "scim-tenant-attribute": {
    value: "PATH",
    description: "the SCIM user attribute that is the record's tenant_id (a path; an extension's with its URN)",
    schema: {
      type: "string",
      minLength: 1,
      default: "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:organization",
    },
  },
  "scim-tenant-id": {
    value: "ID",
    description: "one tenant_id for every SCIM user (then --scim-tenant-attribute is not read)",
    unset: "none",
    schema: { type: "string", minLength: 1 },
  },
  "scim-max-body-bytes": {
    value: "N",
    description: "largest SCIM request body (413 above)",
    schema: { type: "integer", minimum: 1024, maximum: 67108864, default: 1048576 },
  },
  "scim-max-operations": {
    value: "N",
    description: "most operations in one SCIM PATCH (413 above)",
    schema: { type: "integer", minimum: 1, maximum: 100000, default: 1000 },
  },
  "scim-max-page-size": {
    value: "N",
    description: "most resources in one SCIM list answer (a larger count is lowered to it)",
    schema: { type: "integer", minimum: 1, maximum: 10000, default: 200 },
  },
  "scim-max-resources": {
    value: "N",
    description: "most SCIM users and groups held (a create above answers 403)",
    schema: { type: "integer", minimum: 1, maximum: 20000000, default: 2000000 },
  },
  "scim-max-deprovision-share": {
    value: "0..1",
    description:
      "largest share of the synced SCIM users that deletions and deactivations may take out within the window; " +
      "a change beyond it is held (503, not applied, reported); 1 turns the guard off",
    schema: { type: "number", minimum: 0, maximum: 1, default: 0.1 },
  },
  "scim-deprovision-window-seconds": {
    value: "S",
    description: "the window of --scim-max-deprovision-share",
    schema: { type: "number", minimum: 1, maximum: 604800, default: 3600 },
  },
  "roles-claim": {
    value: "NAME",
    description: "read roles from this token claim instead of a directory",
    unset: "none",
    schema: { type: "string", minLength: 1 },
  },
  "no-directory": {
    description: "start without --directory or --roles-claim (application-only: every user call is denied)",
    schema: { type: "boolean", default: false },
  },
  port: {
    value: "N",
    description: "port to listen on (0 = any free port)",
    schema: { type: "integer", minimum: 0, maximum: 65535, default: 8181 },
  },
  host: {
    value: "H",
    description: "address to bind",
    schema: { type: "string", minLength: 1, default: "127.0.0.1" },
  },
  "admin-port": {
    value: "N",
    description: "serve /health, /ready and /metrics on this port instead of the decision port",
    unset: "none (the decision port)",
    schema: { type: "integer", minimum: 0, maximum: 65535 },
  },
  "admin-host": {
    value: "H",
    description: "address to bind the admin port",
    schema: { type: "string", minLength: 1, default: "127.0.0.1" },
  },
  "grpc-port": {
    value: "N",
    description:
      "serve Envoy ext_authz over gRPC (envoy.service.auth.v3.Authorization) and grpc.health.v1 on this port, " +
      "h2c (0 = any free port)",
    unset: "none (off)",
    schema: { type: "integer", minimum: 0, maximum: 65535 },
  },
  "grpc-host": {
    value: "H",
    description: "address to bind the gRPC port",
    unset: "the --host value",
    schema: { type: "string", minLength: 1 },
  },
  "grpc-max-message-bytes": {
    value: "N",
    description: "largest gRPC request message accepted (RESOURCE_EXHAUSTED above)",
    schema: { type: "integer", minimum: 1024, maximum: 16777216, default: 131072 },
  },
  workers: {
    value: "N",
    description:
      "processes sharing the decision and gRPC ports (node:cluster), each with its own bundle and directory in " +
      "memory; a container or sidecar runs one and scales by replicas",
    schema: { type: "integer", minimum: 1, maximum: 256, default: 1 },
  },
  "role-check": {
    value: "MODE",
    description: "enforce, or audit (a failed role check allows and reports would_deny)",
    schema: { enum: ["enforce", "audit"], default: "enforce" },
  },
  "log-level": {
    value: "LEVEL",
    description: "fatal, error, warn, info, debug, trace or silent",
    schema: { enum: ["fatal", "error", "warn", "info", "debug", "trace", "silent"], default: "info" },
  },
  "max-body-bytes": {
    value: "N",
    description: "largest request body accepted (413 above)",
    schema: { type: "integer", minimum: 256, maximum: 16777216, default: 65536 },
  },
  "headers-timeout-ms": {
    value: "MS",
    description: "time to receive a request's headers (408 and disconnect after)",
    schema: { type: "integer", minimum: 100, maximum: 600000, default: 10000 },
  },
  "request-timeout-ms": {
    value: "MS",
    description: "time to receive a whole request; at least the headers timeout",
    schema: { type: "integer", minimum: 100, maximum: 3600000, default: 30000 },
  },
  "keep-alive-timeout-ms": {
    value: "MS",
    description: "idle time before a keep-alive connection is closed",
    schema: { type: "integer", minimum: 100, maximum: 3600000, default: 65000 },
  },
  "body-timeout-ms": {
    value: "MS",
    description: "time to receive the body of POST /decide (408 body_timeout after)",
    schema: { type: "integer", minimum: 100, maximum: 3600000, default: 10000 },
  },
  "log-buffer-bytes": {
    value: "N",
    description: "log bytes that may wait for stdout; past it lines are dropped and counted",
    schema: { type: "integer", minimum: 16384, maximum: 1073741824, default: 1048576 },
  },
  "decision-memo-entries": {
    value: "N",
    description:
      "decisions kept per bundle revision and answered again for the exact same policy input (also capped at " +
      "32 MiB); 0 = off",
    schema: { type: "integer", minimum: 0, maximum: 1000000, default: 10000 },
  },
  watch: {
    description: "watch --bundle and --directory and reload them on change",
    schema: { type: "boolean", default: true },
  },
  "decision-log-url": {
    value: "URL",
    description:
      "ship decision log events to this collector with OPA's decision-log upload protocol " +
      "(POST of gzip JSON arrays); Basic credentials may be given in the URL",
    unset: "none (the stdout line only)",
    schema: { type: "string", pattern: "^https?://" },
  },
  "decision-log-token-file": {
    value: "FILE",
    description: "a file holding the collector's bearer token, read again when it changes",
    unset: "none",
    schema: { type: "string", minLength: 1 },
  },
  "decision-log-label": {
    value: "K=V,...",
    description: "labels added to every event beside id and version (comma-separated name=value pairs)",
    unset: "none",
    schema: { type: "string", pattern: "^[A-Za-z0-9_.-]+=[^,]*(,[A-Za-z0-9_.-]+=[^,]*)*$" },
  },
  "decision-log-buffer-bytes": {
    value: "N",
    description: "event bytes that may wait for the collector; past it the oldest events are dropped and counted",
    schema: { type: "integer", minimum: 65536, maximum: 1073741824, default: 16777216 },
  },
  "decision-log-batch-bytes": {
    value: "N",
    description: "largest upload, in compressed bytes; a full batch is uploaded at once",
    schema: { type: "integer", minimum: 1024, maximum: 16777216, default: 32768 },
  },
  "decision-log-period-seconds": {
    value: "S",
    description: "seconds between uploads of what waits when no batch fills up",
    schema: { type: "number", minimum: 0.05, maximum: 3600, default: 5 },
  },
  "decision-log-timeout-seconds": {
    value: "S",
    description: "time an upload may take before it counts as failed (and is retried)",
    schema: { type: "number", minimum: 0.1, maximum: 600, default: 10 },
  },
  "decision-log-problem-seconds": {
    value: "S",
    description: "/ready lists a problem (still ready) once uploads have failed for this long",
    schema: { type: "number", minimum: 0, maximum: 86400, default: 60 },
  },
  "decision-log-stdout": {
    description: "write each decision as a JSON line on stdout (off: the collector keeps the only record)",
    schema: { type: "boolean", default: true },
  },
  "authzen-pep-key-file": {
    value: "FILE",
    description:
      "turn on the AuthZEN endpoints (/access/v1/...) for PEPs presenting this file's key as a Bearer credential " +
      "(compared in constant time, read again when the file changes)",
    unset: "none",
    schema: { type: "string", minLength: 1 },
  },
  "authzen-pep-clients": {
    value: "ID,...",
    description:
      "turn on the AuthZEN endpoints for PEPs presenting an access token of one of these clients (client_id), " +
      "verified as /decide verifies tokens",
    unset: "none",
    schema: { type: "string", pattern: "^[^,\\s]+(,[^,\\s]+)*$" },
  },
  "authzen-pdp-id": {
    value: "URL",
    description:
      "the AuthZEN policy_decision_point identifier (https, no query or fragment): serves " +
      "/.well-known/authzen-configuration with each endpoint's absolute URL under it",
    unset: "none (no discovery document)",
    schema: { type: "string", pattern: "^https://[^?#\\s]+$" },
  },
  "authzen-max-batch": {
    value: "N",
    description: "most items of one POST /access/v1/evaluations (400 above)",
    schema: { type: "integer", minimum: 1, maximum: 1000, default: 100 },
  },
  "authzen-max-page": {
    value: "N",
    description: "most results of one AuthZEN search page, and the page size when the PEP names no page.limit",
    schema: { type: "integer", minimum: 1, maximum: 1000, default: 100 },
  },
  "authzen-search-budget": {
    value: "N",
    description:
      "most candidates (directory users, routes, methods) one AuthZEN search request evaluates; a page that " +
      "reaches it ends early with a next_token",
    schema: { type: "integer", minimum: 1, maximum: 1000000, default: 1000 },
  },
  "shutdown-timeout": {
    value: "S",
    description:
      "on SIGTERM/SIGINT, seconds the whole stop may take (the delay included); requests still unanswered then are cut",
    schema: { type: "number", minimum: 0, maximum: 3600, default: 10 },
  },
  "shutdown-delay": {
    value: "S",
    description:
      "on SIGTERM/SIGINT, seconds to keep accepting and answering (with /ready 503) before the port closes, so " +
      "load balancers stop sending first; less than --shutdown-timeout",
    schema: { type: "number", minimum: 0, maximum: 3600, default: 0 },
  },
  "check-config": {
    description:
      "load everything start-up loads (config, keys file, bundle, directory), bind no port, print one line and " +
      "exit 0; or the start-up failure's line and exit 2",
    schema: { type: "boolean", default: false },
  },
} as const satisfies Record<string, ServiceOption>;

type Flag = keyof typeof OPTIONS;
type FileFlag = Exclude<Flag, "config" | "project">;

/** The value a schema of OPTIONS accepts: its enum's members, or the type's. */
type SchemaValue<S> = S extends { readonly enum: readonly (infer E)[] }
  ? E
  : S extends { readonly type: "string" }
    ? string
    : S extends { readonly type: "number" | "integer" }
      ? number
      : S extends { readonly type: "boolean" }
        ? boolean
        : never;

/** `shutdown-timeout` -> `shutdownTimeout`, as camel() does at run time. */
type Camel<S extends string> = S extends `${infer Head}-${infer Tail}` ? `${Head}${Capitalize<Camel<Tail>>}` : S;

/** Every option of the config file with the type its schema accepts. */
type OptionValues = { [F in FileFlag as Camel<F>]: SchemaValue<(typeof OPTIONS)[F]["schema"]> };

/** The options with a default in their schema. */
type Defaulted = {
  [F in FileFlag]: (typeof OPTIONS)[F]["schema"] extends { default: unknown } ? Camel<F> : never;
}[FileFlag];

/** Always present in a loaded configuration: the options with a default, the issuer (required), the bundle. */
type Present = Defaulted | "issuer" | "bundle";

/** A loaded configuration: what the config schema accepts, with the defaults filled in. */
export type ServiceConfig = { [K in Present]: OptionValues[K] } & {
  [K in Exclude<keyof OptionValues, Present>]?: OptionValues[K];
};

function camel(flag: string): string {
  return flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

function envName(flag: string): string {
  return `PORTIER_${flag.toUpperCase().replace(/-/g, "_")}`;
}

const ENTRIES: [string, ServiceOption][] = Object.entries(OPTIONS);
const FILE_ENTRIES = ENTRIES.filter(([flag]) => flag !== "config" && flag !== "project");
const isSwitch = (o: ServiceOption) => o.value === undefined;
/** Switches with a `--no-` form: all but those whose name says no already (--no-directory). */
const NEGATABLE = ENTRIES.filter(([flag, o]) => isSwitch(o) && !flag.startsWith("no-")).map(([flag]) => flag);

const BINARY_UNITS = [
  [1024 ** 3, "GiB"],
  [1024 ** 2, "MiB"],
  [1024, "KiB"],
] as const;

/** An option's default as --help and the references show it: "67108864 (64 MiB)" for a byte count. */
function shownDefault(flag: string, o: ServiceOption): string | undefined {
  if (!("default" in o.schema)) return o.unset;
  const value = o.schema.default;
  if (flag.endsWith("-bytes") && typeof value === "number") {
    const unit = BINARY_UNITS.find(([size]) => value >= size && value % size === 0);
    if (unit) return `${value} (${value / unit[0]} ${unit[1]})`;
  }
  return JSON.stringify(value).replace(/^"(.*)"$/, "$1");
}

function helpDescription(flag: string, o: ServiceOption): string {
  return NEGATABLE.includes(flag) ? `${o.description}; --no-${flag} to turn it off` : o.description;
}

/** The options as `portier serve --help` renders them (src/cli/args.ts OptionSpec). */
export const SERVICE_OPTIONS = Object.fromEntries(
  ENTRIES.map(([flag, o]) => {
    const shown = shownDefault(flag, o);
    return [
      flag,
      {
        type: isSwitch(o) ? ("boolean" as const) : ("string" as const),
        description: helpDescription(flag, o),
        ...(o.value !== undefined ? { value: o.value } : {}),
        ...(shown !== undefined ? { default: shown } : {}),
      },
    ];
  }),
);

const PARSE_OPTIONS: Record<string, { type: "string" | "boolean" }> = {};
for (const [flag, o] of ENTRIES) PARSE_OPTIONS[flag] = { type: isSwitch(o) ? "boolean" : "string" };
for (const flag of NEGATABLE) PARSE_OPTIONS[`no-${flag}`] = { type: "boolean" };

/** The JSON Schema of a config file (and of the merged configuration): one property per option. */
const CONFIG_SCHEMA = {
  type: "object",
  additionalProperties: false,
  properties: Object.fromEntries(
    FILE_ENTRIES.map(([flag, o]) => {
      const shown = shownDefault(flag, o);
      return [
        camel(flag),
        {
          ...o.schema,
          description:
            `${o.description} (flag --${flag}, env ${envName(flag)}` +
            `${shown !== undefined ? `; default: ${shown}` : ""})`,
        },
      ];
    }),
  ),
};

/** The JSON Schema document of a config file, as committed in docs/config.schema.json. */
export function configSchemaDocument(): Record<string, unknown> {
  return {
    $schema: "http://json-schema.org/draft-07/schema#",
    title: "portier serve configuration file (--config FILE or PORTIER_CONFIG)",
    description:
      "Every key is optional in the file; issuer is required from the file, a flag or PORTIER_ISSUER. Flags " +
      "win over the environment, which wins over the file.",
    ...CONFIG_SCHEMA,
    properties: {
      $schema: { type: "string", description: "ignored by Portier; lets editors find this schema" },
      $comment: { type: "string", description: "ignored by Portier: a note for the file's readers" },
      ...CONFIG_SCHEMA.properties,
    },
  };
}

// coerceTypes: flag and environment values arrive as strings ("8181", "false"); useDefaults: each schema's default.
const ajv = new Ajv({ allErrors: true, coerceTypes: true, useDefaults: true });
const validate = ajv.compile<ServiceConfig>({ ...CONFIG_SCHEMA, required: ["issuer"] });

/** Where a value came from, for error messages: a flag, an environment variable or the config file. */
function origin(source: string, value: unknown): string {
  const shown = typeof value === "string" ? JSON.stringify(redactUrls(value)) : JSON.stringify(value);
  return source.startsWith("--")
    ? ` (from ${source} ${shown})`
    : source.startsWith("PORTIER_")
      ? ` (from ${source}=${shown})`
      : ` (from ${source}: ${shown})`;
}

function unknownFlagProblem(argv: string[]): string | undefined {
  const known = Object.keys(PARSE_OPTIONS).map((f) => `--${f}`);
  const flagName = (arg: string) => arg.replace(/=.*$/s, "");
  const bad = argv.find((a) => a.startsWith("-") && a !== "--" && !known.includes(flagName(a)));
  if (bad === undefined) return undefined;
  const name = flagName(bad);
  return `config: unknown option '${name}'${didYouMean(name, known, (s) => s)}`;
}

/**
 * The old spelling of a switch, `--watch false` or `--watch=true`, rewritten as `--no-watch` or `--watch`, each
 * rewrite told to `deprecated` (accepted for one release).
 */
function switchSpellings(argv: string[], deprecated: (line: string) => void): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const m = /^--([a-z-]+)(?:=(.*))?$/s.exec(arg);
    const flag = m?.[1];
    const o = flag === undefined ? undefined : (OPTIONS as Record<string, ServiceOption>)[flag];
    if (flag === undefined || o === undefined || !isSwitch(o)) {
      out.push(arg);
      continue;
    }
    const value = m?.[2] ?? (argv[i + 1] === "true" || argv[i + 1] === "false" ? argv[++i] : undefined);
    if (value === undefined) {
      out.push(arg);
      continue;
    }
    if (value !== "true" && value !== "false")
      throw new ConfigError([`config: --${flag} is a switch and takes no value`]);
    const now = value === "true" ? `--${flag}` : NEGATABLE.includes(flag) ? `--no-${flag}` : undefined;
    if (now === undefined) throw new ConfigError([`config: --${flag} is a switch: leave it out instead of "false"`]);
    deprecated(`portier serve: --${flag} ${value} is deprecated and will be refused in the next release: write ${now}`);
    out.push(now);
  }
  return out;
}

export function loadConfig(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  deprecated: (line: string) => void = (line) => console.error(line),
  cwd: string = process.cwd(),
): ServiceConfig {
  const flags = parseFlags(argv, deprecated);
  // Each layer overrides the one before: the project's portier.json, the config file, the environment, the flags.
  const layers: Layers = { merged: {}, source: {}, problems: [] };
  const project = projectOf(flags.project, env.PORTIER_PROJECT, cwd);
  fromProject(layers, project);
  fromConfigFile(layers, flags, env);
  fromEnvironment(layers, env);
  fromFlags(layers, flags);
  const config = validated(layers, project === undefined ? DEFAULT_BUNDLE : join(project, "build", "bundle.tar.gz"));
  for (const check of COMBINATION_CHECKS) {
    const problem = check(config);
    if (problem) throw new ConfigError([problem]);
  }
  return config;
}

type FlagValues = Record<string, string | boolean | undefined>;

/** The options given so far, where each came from (for messages), and the problems found. */
interface Layers {
  merged: Record<string, unknown>;
  source: Record<string, string>;
  problems: string[];
}

/** The command line, the old spellings of switches rewritten first. */
function parseFlags(argv: string[], deprecated: (line: string) => void): FlagValues {
  const args = switchSpellings(argv, deprecated);
  try {
    return parseArgs({ args, options: PARSE_OPTIONS, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new ConfigError([unknownFlagProblem(argv) ?? `config: ${messageOf(err)}`]);
  }
}

/** Config keys that name a file: relative in a project's portier.json, they are the project's files. */
const PATH_KEYS = new Set(FILE_ENTRIES.filter(([, o]) => o.value?.includes("FILE")).map(([flag]) => camel(flag)));

/** The project folder: --project, else PORTIER_PROJECT, else the current folder when it is a policy project. */
function projectOf(flag: unknown, env: string | undefined, cwd: string): string | undefined {
  const named = typeof flag === "string" ? flag : env !== undefined && env !== "" ? env : undefined;
  if (named === undefined) return existsSync(join(cwd, "data", "routes.json")) ? resolve(cwd) : undefined;
  const dir = resolve(cwd, named);
  if (!existsSync(join(dir, "data", "routes.json")))
    throw new ConfigError([
      `config.project: ${dir} is not a policy project (no data/routes.json)` +
        `${typeof flag === "string" ? "" : " (from PORTIER_PROJECT)"}; portier init DIR makes one`,
    ]);
  return dir;
}

/** The project's portier.json, its paths read from the project folder (a URL is left as it is). */
function fromProject(layers: Layers, project: string | undefined): void {
  if (project === undefined) return;
  const file = join(project, "portier.json");
  if (!existsSync(file)) return;
  for (const [key, value] of readConfigFile(layers, file, "")) {
    const path = typeof value === "string" && PATH_KEYS.has(key) && !/^https?:\/\//.test(value) && !isAbsolute(value);
    layers.merged[key] = path ? resolve(project, value) : value;
    layers.source[key] = `${file}: ${key}`;
  }
}

/** --config FILE or PORTIER_CONFIG: a JSON object of known keys (an unknown key is a problem, reported later). */
function fromConfigFile(layers: Layers, flags: FlagValues, env: NodeJS.ProcessEnv): void {
  const fileFromEnv = flags.config === undefined && env.PORTIER_CONFIG;
  const file = typeof flags.config === "string" ? flags.config : env.PORTIER_CONFIG;
  if (!file) return;
  for (const [key, value] of readConfigFile(layers, file, fileFromEnv ? " (from PORTIER_CONFIG)" : "")) {
    layers.merged[key] = value;
    layers.source[key] = `${file}: ${key}`;
  }
}

/** The options a JSON config file sets, each a known key ($schema and $comment are skipped). */
function readConfigFile(layers: Layers, file: string, from: string): [string, unknown][] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readInputFileSync(file, MAX_CONFIG_FILE_BYTES).toString("utf8"));
  } catch (err) {
    const why = err instanceof InputFileError ? err.why : codeOf(err) === "ENOENT" ? "file not found" : messageOf(err);
    throw new ConfigError([`config file ${file}${from}: ${why}`]);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new ConfigError([`config file ${file}: must be a JSON object`]);
  const known = Object.keys(CONFIG_SCHEMA.properties);
  const entries: [string, unknown][] = [];
  for (const [key, value] of Object.entries(parsed)) {
    if (key === "$schema" || key === "$comment") continue;
    if (!known.includes(key)) {
      layers.problems.push(
        `config: unknown option "${key}" in ${file}${didYouMean(key, known)}; the keys are listed in ` +
          `docs/config.schema.json`,
      );
      continue;
    }
    entries.push([key, value]);
  }
  return entries;
}

/** PORTIER_* variables (an empty one is unset). */
function fromEnvironment(layers: Layers, env: NodeJS.ProcessEnv): void {
  for (const [flag] of FILE_ENTRIES) {
    const name = envName(flag);
    const envValue = env[name];
    if (envValue === undefined || envValue === "") continue;
    // A switch also takes 1 and 0 from the environment, as shells write booleans (ajv coerces true and false).
    const o = (OPTIONS as Record<string, ServiceOption>)[flag]!;
    layers.merged[camel(flag)] = isSwitch(o) && (envValue === "1" || envValue === "0") ? envValue === "1" : envValue;
    layers.source[camel(flag)] = name;
  }
}

/** The flags given; --no-watch is the watch option set to false. */
function fromFlags(layers: Layers, flags: FlagValues): void {
  for (const [given, value] of Object.entries(flags)) {
    if (given === "config" || given === "project" || value === undefined) continue;
    const negated = given.startsWith("no-") && NEGATABLE.includes(given.slice(3));
    const flag = negated ? given.slice(3) : given;
    layers.merged[camel(flag)] = negated ? !value : value;
    layers.source[camel(flag)] = `--${given}`;
  }
}

/** The options checked against the schema (types coerced, defaults filled); every problem is reported at once. */
function validated({ merged, source, problems }: Layers, bundle: string): ServiceConfig {
  const config: Record<string, unknown> = { bundle, ...merged };
  if (!validate(config)) {
    for (const e of validate.errors ?? []) {
      const key = e.instancePath.split("/")[1] ?? "";
      const path = e.instancePath ? `config${e.instancePath.replace(/\//g, ".")}` : "config";
      const where = source[key];
      const from = key && where ? origin(where, merged[key]) : "";
      if (e.keyword === "required") {
        const missing = String(e.params["missingProperty"]);
        const flag = missing.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
        problems.push(
          `config.${missing}: is required (--${flag}, ${envName(flag)} or "${missing}" in the config file)`,
        );
      } else if (e.keyword === "enum")
        problems.push(`${path}: must be one of ${(e.params["allowedValues"] as unknown[]).join(", ")}${from}`);
      else problems.push(`${path}: ${e.message ?? "is invalid"}${from}`);
    }
    throw new ConfigError(problems);
  }
  if (problems.length) throw new ConfigError(problems);
  return config;
}

/** Options valid one by one that do not go together: the first problem found, in this order. */
const COMBINATION_CHECKS: ((config: ServiceConfig) => string | undefined)[] = [
  // node:http refuses a headers timeout longer than the request timeout, which includes the headers.
  (config) =>
    config.headersTimeoutMs > config.requestTimeoutMs
      ? `config.headersTimeoutMs: must be <= config.requestTimeoutMs (${config.requestTimeoutMs})`
      : undefined,
  (config) =>
    config.shadowBundle !== undefined && config.shadowBundleUrl !== undefined
      ? "config.shadowBundleUrl: cannot be combined with --shadow-bundle (one candidate: a file or a URL); " +
        "drop one of them"
      : undefined,
  (config) =>
    config.directory !== undefined && config.directoryUrl !== undefined
      ? "config.directoryUrl: cannot be combined with --directory (one source of synced users: a file or a URL); " +
        "drop one of them"
      : undefined,
  // The timeout bounds the whole stop; a delay that fills it would leave no time to answer what was accepted.
  (config) =>
    config.shutdownDelay > 0 && config.shutdownDelay >= config.shutdownTimeout
      ? `config.shutdownDelay: must be less than config.shutdownTimeout (${config.shutdownTimeout}), which ` +
        "bounds the whole stop: the delay, then answering the requests accepted; " +
        "raise --shutdown-timeout (e.g. to the delay + 10)"
      : undefined,
  (config) =>
    config.authzenPdpId !== undefined &&
    config.authzenPepKeyFile === undefined &&
    config.authzenPepClients === undefined
      ? "config.authzenPdpId: the AuthZEN endpoints are off without a PEP credential; add --authzen-pep-key-file " +
        "FILE or --authzen-pep-clients ID"
      : undefined,
  (config) => decisionLogConfigProblem(config),
  (config) => scimConfigProblem(config),
  (config) => {
    if (!config.noDirectory) return undefined;
    const other =
      config.directory !== undefined
        ? "--directory"
        : config.directoryUrl !== undefined
          ? "--directory-url"
          : config.rolesClaim !== undefined
            ? "--roles-claim"
            : config.scimTokenFile !== undefined
              ? "--scim-token-file"
              : undefined;
    return other && `config.noDirectory: cannot be combined with ${other}; drop one of them`;
  },
  (config) =>
    !config.noDirectory &&
    config.directory === undefined &&
    config.directoryUrl === undefined &&
    config.rolesClaim === undefined &&
    config.scimTokenFile === undefined
      ? "config: neither --directory nor --roles-claim is set, so every user call would be denied (not_synced); " +
        "pass --directory FILE (or --directory-url URL) or --roles-claim NAME, or --no-directory for an " +
        "application-only deployment"
      : undefined,
];

/** The --scim-* options that only make sense together. */
function scimConfigProblem(config: ServiceConfig): string | undefined {
  const on = config.scimTokenFile !== undefined;
  const stores = [config.scimJournal, config.scimPostgresUrl].filter((v) => v !== undefined).length;
  if (!on) {
    if (config.scimJournal !== undefined) return "config.scimJournal: needs --scim-token-file (SCIM is off without it)";
    if (config.scimPostgresUrl !== undefined)
      return "config.scimPostgresUrl: needs --scim-token-file (SCIM is off without it)";
    return undefined;
  }
  if (stores === 0)
    return (
      "config.scimTokenFile: needs a store for the changes: --scim-journal FILE (one process) or " +
      "--scim-postgres-url URL (a fleet)"
    );
  if (stores === 2)
    return "config.scimPostgresUrl: cannot be combined with --scim-journal (one store of SCIM changes); drop one";
  if (config.rolesClaim !== undefined)
    return (
      "config.scimTokenFile: cannot be combined with --roles-claim (SCIM feeds the directory, which a roles " +
      "claim replaces); drop one"
    );
  if (config.scimJournal !== undefined && config.workers > 1)
    return (
      "config.scimJournal: one process writes a journal, and --workers is above 1; use --scim-postgres-url " +
      "(every worker follows the database) or --workers 1"
    );
  return undefined;
}

/** Labels every event carries whatever the operator sets (OPA's). */
const RESERVED_LABELS = ["id", "version"];

/** The --decision-log-* options that only make sense together. */
function decisionLogConfigProblem(config: ServiceConfig): string | undefined {
  const url = config.decisionLogUrl;
  if (url === undefined) {
    if (config.decisionLogTokenFile !== undefined)
      return "config.decisionLogTokenFile: needs --decision-log-url (the collector to send the token to)";
    return undefined;
  }
  const hasBasic = /^[a-z]+:\/\/[^/?#]*@/i.test(url);
  if (hasBasic && config.decisionLogTokenFile !== undefined)
    return (
      "config.decisionLogTokenFile: cannot be combined with Basic credentials in --decision-log-url; " +
      "drop one of them"
    );
  for (const name of Object.keys(operatorLabels(config.decisionLogLabel))) {
    if (RESERVED_LABELS.includes(name))
      return (
        `config.decisionLogLabel: the label "${name}" is set by Portier (${RESERVED_LABELS.join(", ")}); ` +
        "choose another name"
      );
  }
  return undefined;
}
