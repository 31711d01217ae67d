/**
 * Service configuration: flags, then PORTIER_* environment variables, then an optional JSON file, then
 * defaults; validated with ajv so each bad option is reported by its path and by where it came from
 * (config.port: must be integer (from PORTIER_PORT="abc")). One table, SERVICE_OPTIONS, gives each option's
 * flag, description, default and JSON-schema type: it parses argv, renders `portier serve --help`, and is the
 * JSON Schema of the config file (CONFIG_SCHEMA, written to docs/config.schema.json), and ServiceConfig, the
 * type of a loaded configuration, is derived from it (an option's value type from its schema, required when
 * it has a default or is required).
 */
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { codeOf, messageOf } from "../errors/caught.js";
import { PortierError } from "../errors/portier-error.js";
import { Ajv } from "ajv";
import { redactUrls } from "../reload/index.js";
import { didYouMean } from "../text/did-you-mean.js";
import { SIGNING_ALGS } from "../engine/index.js";

export const DEFAULT_BUNDLE = fileURLToPath(new URL("../../build/bundle.tar.gz", import.meta.url));

export class ConfigError extends PortierError {
  static override readonly code = "config";
  constructor(readonly problems: string[]) {
    super(problems.join("\n"));
  }
}

interface ServiceOption {
  /** "string": the flag takes a value; "boolean": the flag alone means true. */
  type: "string" | "boolean";
  value?: string;
  description: string;
  /** The default as shown in --help (undefined: none). */
  default?: string;
  schema: Record<string, unknown>;
}

/** Every option of `portier serve`, by flag name; the config-file key and env variable derive from it. */
export const SERVICE_OPTIONS = {
  config: {
    type: "string",
    value: "FILE",
    description: "a JSON config file (keys: docs/config.schema.json)",
    default: "none",
    schema: {},
  },
  issuer: {
    type: "string",
    value: "URL",
    description: "the issuer ({auth_url}); tokens' iss must equal it (required)",
    schema: { type: "string", pattern: "^https?://" },
  },
  jwks: {
    type: "string",
    value: "FILE|URL",
    description: "the issuer's keys (JWKS file or URL) instead of OpenID discovery",
    default: "discovery",
    schema: { type: "string", minLength: 1 },
  },
  "jwks-refresh-seconds": {
    type: "string",
    value: "S",
    description: "seconds between re-reads of the JWKS file or URL (a watched file reloads within about a second)",
    default: "60",
    schema: { type: "number", minimum: 0.05, maximum: 86400 },
  },
  "require-keys-at-start": {
    type: "boolean",
    description:
      "exit 1 at start when the issuer's keys cannot be loaded (otherwise they load in the background and /ready answers 503 until then)",
    default: "false",
    schema: { type: "boolean" },
  },
  bundle: {
    type: "string",
    value: "FILE",
    description: "the compiled policy bundle (watched, hot-swapped)",
    default: "build/bundle.tar.gz",
    schema: { type: "string", minLength: 1 },
  },
  "bundle-max-bytes": {
    type: "string",
    value: "N",
    description: "largest bundle download, file and inflated size",
    default: "67108864 (64 MiB)",
    schema: { type: "integer", minimum: 1024, maximum: 1073741824 },
  },
  "bundle-url": {
    type: "string",
    value: "URL",
    description: "poll a bundle server instead of --bundle (ETag, back-off)",
    default: "none",
    schema: { type: "string", pattern: "^https?://" },
  },
  "verification-key": {
    type: "string",
    value: "FILE",
    description:
      "PEM public key (or certificate) or JWKS file: refuse a bundle (file or --bundle-url) without a valid OPA signature (/.signatures.json)",
    default: "none (bundles are not verified)",
    schema: { type: "string", minLength: 1 },
  },
  "verification-alg": {
    type: "string",
    value: "ALG",
    description: "JWS algorithm the --verification-key PEM key signs with (a JWKS key names its own)",
    default: "RS256",
    schema: { enum: [...SIGNING_ALGS] },
  },
  "bundle-poll-seconds": {
    type: "string",
    value: "N",
    description: "seconds between polls of --bundle-url",
    default: "30",
    schema: { type: "number", minimum: 0.05, maximum: 86400 },
  },
  directory: {
    type: "string",
    value: "FILE",
    description: "synced users, JSON array or NDJSON of {sub, tenant_id, roles} (watched)",
    default: "none",
    schema: { type: "string", minLength: 1 },
  },
  "directory-url": {
    type: "string",
    value: "URL",
    description: "poll a directory server instead of --directory (ETag, back-off, gzip accepted)",
    default: "none",
    schema: { type: "string", pattern: "^https?://" },
  },
  "directory-poll-seconds": {
    type: "string",
    value: "N",
    description: "seconds between polls of --directory-url",
    default: "30",
    schema: { type: "number", minimum: 0.05, maximum: 86400 },
  },
  "directory-max-bytes": {
    type: "string",
    value: "N",
    description: "largest --directory-url download, on the wire and inflated",
    default: "2147483648 (2 GiB)",
    schema: { type: "integer", minimum: 1024, maximum: 3221225472 },
  },
  "directory-max-shrink": {
    type: "string",
    value: "0..1",
    description: "largest share of the records a directory reload may drop (more is refused)",
    default: "0.5",
    schema: { type: "number", minimum: 0, maximum: 1 },
  },
  "allow-directory-shrink": {
    type: "string",
    value: "true|false",
    description: "accept any directory shrink, an empty directory included",
    default: "false",
    schema: { type: "boolean" },
  },
  "directory-shrink-window-seconds": {
    type: "string",
    value: "S",
    description:
      "the shrink guard compares with the largest record count accepted within this window (0: the current index only)",
    default: "86400",
    schema: { type: "number", minimum: 0, maximum: 31536000 },
  },
  "roles-claim": {
    type: "string",
    value: "NAME",
    description: "read roles from this token claim instead of a directory",
    default: "none",
    schema: { type: "string", minLength: 1 },
  },
  "no-directory": {
    type: "boolean",
    description: "start without --directory or --roles-claim (application-only: every user call is denied)",
    default: "false",
    schema: { type: "boolean" },
  },
  port: {
    type: "string",
    value: "N",
    description: "port to listen on (0 = any free port)",
    default: "8181",
    schema: { type: "integer", minimum: 0, maximum: 65535 },
  },
  host: {
    type: "string",
    value: "H",
    description: "address to bind",
    default: "127.0.0.1",
    schema: { type: "string", minLength: 1 },
  },
  "admin-port": {
    type: "string",
    value: "N",
    description: "serve /health, /ready and /metrics on this port instead of the decision port",
    default: "none (the decision port)",
    schema: { type: "integer", minimum: 0, maximum: 65535 },
  },
  "admin-host": {
    type: "string",
    value: "H",
    description: "address to bind the admin port",
    default: "127.0.0.1",
    schema: { type: "string", minLength: 1 },
  },
  "grpc-port": {
    type: "string",
    value: "N",
    description:
      "serve Envoy ext_authz over gRPC (envoy.service.auth.v3.Authorization) and grpc.health.v1 on this port, h2c (0 = any free port)",
    default: "none (off)",
    schema: { type: "integer", minimum: 0, maximum: 65535 },
  },
  "grpc-host": {
    type: "string",
    value: "H",
    description: "address to bind the gRPC port",
    default: "the --host value",
    schema: { type: "string", minLength: 1 },
  },
  "grpc-max-message-bytes": {
    type: "string",
    value: "N",
    description: "largest gRPC request message accepted (RESOURCE_EXHAUSTED above)",
    default: "131072",
    schema: { type: "integer", minimum: 1024, maximum: 16777216 },
  },
  workers: {
    type: "string",
    value: "N",
    description: "processes sharing the port (node:cluster)",
    default: "one per core",
    schema: { type: "integer", minimum: 1, maximum: 256 },
  },
  "role-check": {
    type: "string",
    value: "MODE",
    description: "enforce, or audit (a failed role check allows and reports would_deny)",
    default: "enforce",
    schema: { enum: ["enforce", "audit"] },
  },
  "log-level": {
    type: "string",
    value: "LEVEL",
    description: "fatal, error, warn, info, debug, trace or silent",
    default: "info",
    schema: { enum: ["fatal", "error", "warn", "info", "debug", "trace", "silent"] },
  },
  "max-body-bytes": {
    type: "string",
    value: "N",
    description: "largest request body accepted (413 above)",
    default: "65536",
    schema: { type: "integer", minimum: 256, maximum: 16777216 },
  },
  "headers-timeout-ms": {
    type: "string",
    value: "MS",
    description: "time to receive a request's headers (408 and disconnect after)",
    default: "10000",
    schema: { type: "integer", minimum: 100, maximum: 600000 },
  },
  "request-timeout-ms": {
    type: "string",
    value: "MS",
    description: "time to receive a whole request; at least the headers timeout",
    default: "30000",
    schema: { type: "integer", minimum: 100, maximum: 3600000 },
  },
  "keep-alive-timeout-ms": {
    type: "string",
    value: "MS",
    description: "idle time before a keep-alive connection is closed",
    default: "65000",
    schema: { type: "integer", minimum: 100, maximum: 3600000 },
  },
  "body-timeout-ms": {
    type: "string",
    value: "MS",
    description: "time to receive the body of POST /decide (408 body_timeout after)",
    default: "10000",
    schema: { type: "integer", minimum: 100, maximum: 3600000 },
  },
  "log-buffer-bytes": {
    type: "string",
    value: "N",
    description: "log bytes that may wait for stdout; past it lines are dropped and counted",
    default: "1048576",
    schema: { type: "integer", minimum: 16384, maximum: 1073741824 },
  },
  "decision-memo-entries": {
    type: "string",
    value: "N",
    description:
      "decisions kept per bundle revision and answered again for the exact same policy input (also capped at 32 MiB); 0 = off",
    default: "10000",
    schema: { type: "integer", minimum: 0, maximum: 1000000 },
  },
  watch: {
    type: "string",
    value: "true|false",
    description: "watch --bundle and --directory and reload them on change",
    default: "true",
    schema: { type: "boolean" },
  },
  "decision-log-url": {
    type: "string",
    value: "URL",
    description:
      "ship decision log events to this collector with OPA's decision-log upload protocol " +
      "(POST of gzip JSON arrays); Basic credentials may be given in the URL",
    default: "none (stdout line only)",
    schema: { type: "string", pattern: "^https?://" },
  },
  "decision-log-token-file": {
    type: "string",
    value: "FILE",
    description: "a file holding the collector's bearer token, read again when it changes",
    default: "none",
    schema: { type: "string", minLength: 1 },
  },
  "decision-log-label": {
    type: "string",
    value: "K=V,...",
    description: "labels added to every event beside id and version (comma-separated name=value pairs)",
    default: "none",
    schema: { type: "string", pattern: "^[A-Za-z0-9_.-]+=[^,]*(,[A-Za-z0-9_.-]+=[^,]*)*$" },
  },
  "decision-log-buffer-bytes": {
    type: "string",
    value: "N",
    description: "event bytes that may wait for the collector; past it the oldest events are dropped and counted",
    default: "16777216 (16 MiB)",
    schema: { type: "integer", minimum: 65536, maximum: 1073741824 },
  },
  "decision-log-batch-bytes": {
    type: "string",
    value: "N",
    description: "largest upload, in compressed bytes; a full batch is uploaded at once",
    default: "32768",
    schema: { type: "integer", minimum: 1024, maximum: 16777216 },
  },
  "decision-log-period-seconds": {
    type: "string",
    value: "S",
    description: "seconds between uploads of what waits when no batch fills up",
    default: "5",
    schema: { type: "number", minimum: 0.05, maximum: 3600 },
  },
  "decision-log-timeout-seconds": {
    type: "string",
    value: "S",
    description: "time an upload may take before it counts as failed (and is retried)",
    default: "10",
    schema: { type: "number", minimum: 0.1, maximum: 600 },
  },
  "decision-log-problem-seconds": {
    type: "string",
    value: "S",
    description: "/ready lists a problem (still ready) once uploads have failed for this long",
    default: "60",
    schema: { type: "number", minimum: 0, maximum: 86400 },
  },
  "decision-log-stdout": {
    type: "string",
    value: "true|false",
    description: "write each decision as a JSON line on stdout (false: only ship it to --decision-log-url)",
    default: "true",
    schema: { type: "boolean" },
  },
  "shutdown-timeout": {
    type: "string",
    value: "S",
    description:
      "on SIGTERM/SIGINT, seconds the whole stop may take (the delay included); requests still unanswered then are cut",
    default: "10",
    schema: { type: "number", minimum: 0, maximum: 3600 },
  },
  "shutdown-delay": {
    type: "string",
    value: "S",
    description:
      "on SIGTERM/SIGINT, seconds to keep accepting and answering (with /ready 503) before the port closes, so load balancers stop sending first; less than --shutdown-timeout",
    default: "0",
    schema: { type: "number", minimum: 0, maximum: 3600 },
  },
} as const satisfies Record<string, ServiceOption>;

type Flag = keyof typeof SERVICE_OPTIONS;
type FileFlag = Exclude<Flag, "config">;

/** The value a schema of SERVICE_OPTIONS accepts: its enum's members, or the type's. */
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
type OptionValues = { [F in FileFlag as Camel<F>]: SchemaValue<(typeof SERVICE_OPTIONS)[F]["schema"]> };

/** The values of the options that have one when none is given. */
function defaults() {
  return {
    bundle: DEFAULT_BUNDLE,
    bundlePollSeconds: 30,
    verificationAlg: "RS256",
    jwksRefreshSeconds: 60,
    bundleMaxBytes: 64 * 1024 * 1024,
    directoryPollSeconds: 30,
    directoryMaxBytes: 2 * 1024 ** 3,
    directoryMaxShrink: 0.5,
    allowDirectoryShrink: false,
    directoryShrinkWindowSeconds: 86_400,
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 30_000,
    keepAliveTimeoutMs: 65_000,
    bodyTimeoutMs: 10_000,
    logBufferBytes: 1_048_576,
    decisionMemoEntries: 10_000,
    port: 8181,
    host: "127.0.0.1",
    adminHost: "127.0.0.1",
    workers: availableParallelism(),
    roleCheck: "enforce",
    logLevel: "info",
    maxBodyBytes: 65536,
    grpcMaxMessageBytes: 131072,
    watch: true,
    shutdownTimeout: 10,
    shutdownDelay: 0,
    decisionLogBufferBytes: 16 * 1024 * 1024,
    decisionLogBatchBytes: 32_768,
    decisionLogPeriodSeconds: 5,
    decisionLogTimeoutSeconds: 10,
    decisionLogProblemSeconds: 60,
    decisionLogStdout: true,
    requireKeysAtStart: false,
    noDirectory: false,
  } as const satisfies Partial<OptionValues>;
}

/** Always present in a loaded configuration: the options with a default, and the issuer (required). */
type Present = keyof ReturnType<typeof defaults> | "issuer";

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

const PARSE_OPTIONS = Object.fromEntries(Object.entries(SERVICE_OPTIONS).map(([flag, o]) => [flag, { type: o.type }]));

const FILE_OPTIONS = Object.entries(SERVICE_OPTIONS).filter(([flag]) => flag !== "config");
const FILE_KEYS = FILE_OPTIONS.map(([flag]) => flag);

/** The JSON Schema of a config file (and of the merged configuration): one property per option. */
const CONFIG_SCHEMA = {
  type: "object",
  additionalProperties: false,
  properties: Object.fromEntries(
    FILE_OPTIONS.map(([flag, o]) => {
      const shown = "default" in o ? `; default: ${o.default}` : "";
      return [
        camel(flag),
        { ...o.schema, description: `${o.description} (flag --${flag}, env ${envName(flag)}${shown})` },
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
      "Every key is optional in the file; issuer is required from the file, a flag or PORTIER_ISSUER. Flags win over the environment, which wins over the file.",
    ...CONFIG_SCHEMA,
    properties: {
      $schema: { type: "string", description: "ignored by Portier; lets editors find this schema" },
      ...CONFIG_SCHEMA.properties,
    },
  };
}

const REQUIRED = ["issuer", "bundle", "port", "host", "workers", "roleCheck", "logLevel"];
const ajv = new Ajv({ allErrors: true });
const validate = ajv.compile<ServiceConfig>({ ...CONFIG_SCHEMA, required: REQUIRED });

/** Keys whose schema type is one of these, for reading flag and environment strings. */
function keysOfType(...types: string[]): Set<string> {
  return new Set(
    FILE_OPTIONS.filter(([, o]) => "type" in o.schema && types.includes(o.schema.type)).map(([flag]) => camel(flag)),
  );
}
const NUMERIC = keysOfType("number", "integer");
const BOOLEAN = keysOfType("boolean");

function coerce(key: string, value: unknown): unknown {
  if (typeof value !== "string") return value;
  if (NUMERIC.has(key) && /^-?\d+(\.\d+)?$/.test(value.trim())) return Number(value);
  if (BOOLEAN.has(key))
    return value === "true" || value === "1" ? true : value === "false" || value === "0" ? false : value;
  return value;
}

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
  const known = Object.keys(SERVICE_OPTIONS).map((f) => `--${f}`);
  const flagName = (arg: string) => arg.replace(/=.*$/s, "");
  const bad = argv.find((a) => a.startsWith("-") && a !== "--" && !known.includes(flagName(a)));
  if (bad === undefined) return undefined;
  const name = flagName(bad);
  return `config: unknown option '${name}'${didYouMean(name, known, (s) => s)}`;
}

/** Reads flags, environment and file; throws ConfigError listing every problem by its path and source. */
export function loadConfig(argv: string[], env: NodeJS.ProcessEnv = process.env): ServiceConfig {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({ args: argv, options: PARSE_OPTIONS, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new ConfigError([unknownFlagProblem(argv) ?? `config: ${messageOf(err)}`]);
  }
  const merged: Record<string, unknown> = {};
  const source: Record<string, string> = {};
  const fileFromEnv = values.config === undefined && env.PORTIER_CONFIG;
  const file = typeof values.config === "string" ? values.config : env.PORTIER_CONFIG;
  const problems: string[] = [];
  if (file) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, "utf8"));
    } catch (err) {
      const why = codeOf(err) === "ENOENT" ? "file not found" : messageOf(err);
      throw new ConfigError([`config file ${file}${fileFromEnv ? " (from PORTIER_CONFIG)" : ""}: ${why}`]);
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      throw new ConfigError([`config file ${file}: must be a JSON object`]);
    const known = Object.keys(CONFIG_SCHEMA.properties);
    for (const [key, value] of Object.entries(parsed)) {
      if (key === "$schema") continue;
      if (!known.includes(key)) {
        problems.push(
          `config: unknown option "${key}" in ${file}${didYouMean(key, known)}; the keys are listed in docs/config.schema.json`,
        );
        continue;
      }
      merged[key] = value;
      source[key] = `${file}: ${key}`;
    }
  }
  for (const flag of FILE_KEYS) {
    const name = envName(flag);
    const envValue = env[name];
    if (envValue !== undefined && envValue !== "") {
      merged[camel(flag)] = envValue;
      source[camel(flag)] = name;
    }
  }
  for (const [flag, value] of Object.entries(values)) {
    if (flag === "config" || value === undefined) continue;
    merged[camel(flag)] = value;
    source[camel(flag)] = `--${flag}`;
  }
  const raw = { ...merged };
  for (const key of Object.keys(merged)) merged[key] = coerce(key, merged[key]);
  const config: unknown = { ...defaults(), ...merged };
  if (!validate(config)) {
    for (const e of validate.errors ?? []) {
      const key = e.instancePath.split("/")[1] ?? "";
      const path = e.instancePath ? `config${e.instancePath.replace(/\//g, ".")}` : "config";
      const where = source[key];
      const from = key && where ? origin(where, raw[key]) : "";
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
  // node:http refuses a headers timeout longer than the request timeout, which includes the headers.
  if (config.headersTimeoutMs > config.requestTimeoutMs) {
    throw new ConfigError([`config.headersTimeoutMs: must be <= config.requestTimeoutMs (${config.requestTimeoutMs})`]);
  }
  if (config.directory !== undefined && config.directoryUrl !== undefined) {
    throw new ConfigError([
      "config.directoryUrl: cannot be combined with --directory (one source of synced users: a file or a URL); drop one of them",
    ]);
  }
  // The timeout bounds the whole stop; a delay that fills it would leave no time to answer what was accepted.
  if (config.shutdownDelay > 0 && config.shutdownDelay >= config.shutdownTimeout) {
    throw new ConfigError([
      `config.shutdownDelay: must be less than config.shutdownTimeout (${config.shutdownTimeout}), which bounds the whole stop: the delay, then answering the requests accepted; raise --shutdown-timeout (e.g. to the delay + 10)`,
    ]);
  }
  const decisionLogProblem = decisionLogConfigProblem(config);
  if (decisionLogProblem) throw new ConfigError([decisionLogProblem]);
  if (
    config.noDirectory &&
    (config.directory !== undefined || config.directoryUrl !== undefined || config.rolesClaim !== undefined)
  ) {
    const other =
      config.directory !== undefined
        ? "--directory"
        : config.directoryUrl !== undefined
          ? "--directory-url"
          : "--roles-claim";
    throw new ConfigError([`config.noDirectory: cannot be combined with ${other}; drop one of them`]);
  }
  if (
    !config.noDirectory &&
    config.directory === undefined &&
    config.directoryUrl === undefined &&
    config.rolesClaim === undefined
  ) {
    throw new ConfigError([
      "config: neither --directory nor --roles-claim is set, so every user call would be denied (not_synced); " +
        "pass --directory FILE (or --directory-url URL) or --roles-claim NAME, or --no-directory for an application-only deployment",
    ]);
  }
  return config;
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
  for (const pair of (config.decisionLogLabel ?? "").split(",").filter(Boolean)) {
    const name = pair.slice(0, pair.indexOf("="));
    if (RESERVED_LABELS.includes(name))
      return (
        `config.decisionLogLabel: the label "${name}" is set by Portier (${RESERVED_LABELS.join(", ")}); ` +
        "choose another name"
      );
  }
  return undefined;
}
