/**
 * Service configuration: flags, then PORTIER_* environment variables, then an optional JSON file, then
 * defaults; validated with ajv so each bad option is reported by its path (config.port: must be <= 65535).
 */
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Ajv } from "ajv";

export const DEFAULT_BUNDLE = fileURLToPath(new URL("../../build/bundle.tar.gz", import.meta.url));

export interface ServiceConfig {
  issuer: string;
  jwks?: string;
  bundle: string;
  bundleUrl?: string;
  bundlePollSeconds: number;
  directory?: string;
  rolesClaim?: string;
  port: number;
  host: string;
  workers: number;
  roleCheck: "enforce" | "audit";
  logLevel: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
  maxBodyBytes: number;
  watch: boolean;
}

export class ConfigError extends Error {
  readonly code = "config";
  constructor(readonly problems: string[]) {
    super(problems.join("\n"));
  }
}

const OPTIONS = {
  config: { type: "string" },
  issuer: { type: "string" },
  jwks: { type: "string" },
  bundle: { type: "string" },
  "bundle-url": { type: "string" },
  "bundle-poll-seconds": { type: "string" },
  directory: { type: "string" },
  "roles-claim": { type: "string" },
  port: { type: "string" },
  host: { type: "string" },
  workers: { type: "string" },
  "role-check": { type: "string" },
  "log-level": { type: "string" },
  "max-body-bytes": { type: "string" },
  watch: { type: "string" },
} as const;

const NUMERIC = new Set(["port", "workers", "bundlePollSeconds", "maxBodyBytes"]);

const SCHEMA = {
  type: "object",
  additionalProperties: false,
  required: ["issuer", "bundle", "port", "host", "workers", "roleCheck", "logLevel"],
  properties: {
    issuer: { type: "string", pattern: "^https?://" },
    jwks: { type: "string", minLength: 1 },
    bundle: { type: "string", minLength: 1 },
    bundleUrl: { type: "string", pattern: "^https?://" },
    bundlePollSeconds: { type: "number", minimum: 0.05, maximum: 86400 },
    directory: { type: "string", minLength: 1 },
    rolesClaim: { type: "string", minLength: 1 },
    port: { type: "integer", minimum: 0, maximum: 65535 },
    host: { type: "string", minLength: 1 },
    workers: { type: "integer", minimum: 1, maximum: 256 },
    roleCheck: { enum: ["enforce", "audit"] },
    logLevel: { enum: ["fatal", "error", "warn", "info", "debug", "trace", "silent"] },
    maxBodyBytes: { type: "integer", minimum: 256, maximum: 16777216 },
    watch: { type: "boolean" },
  },
} as const;

const ajv = new Ajv({ allErrors: true });
const validate = ajv.compile(SCHEMA);

function camel(flag: string): string {
  return flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

function coerce(key: string, value: unknown): unknown {
  if (typeof value !== "string") return value;
  if (NUMERIC.has(key) && /^-?\d+(\.\d+)?$/.test(value.trim())) return Number(value);
  if (key === "watch") return value === "true" || value === "1" ? true : value === "false" || value === "0" ? false : value;
  return value;
}

/** Reads flags, environment and file; throws ConfigError listing every problem by its path. */
export function loadConfig(argv: string[], env: NodeJS.ProcessEnv = process.env): ServiceConfig {
  let values: Record<string, string | undefined>;
  try {
    values = parseArgs({ args: argv, options: OPTIONS, strict: true, allowPositionals: false }).values as Record<string, string | undefined>;
  } catch (err) {
    throw new ConfigError([`config: ${(err as Error).message}`]);
  }
  const merged: Record<string, unknown> = {};
  const file = values.config ?? env.PORTIER_CONFIG;
  if (file) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, "utf8"));
    } catch (err) {
      throw new ConfigError([`config file ${file}: ${(err as Error).message}`]);
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new ConfigError([`config file ${file}: must be a JSON object`]);
    Object.assign(merged, parsed);
  }
  for (const flag of Object.keys(OPTIONS)) {
    if (flag === "config") continue;
    const envValue = env[`PORTIER_${flag.toUpperCase().replace(/-/g, "_")}`];
    if (envValue !== undefined && envValue !== "") merged[camel(flag)] = envValue;
  }
  for (const [flag, value] of Object.entries(values)) if (flag !== "config" && value !== undefined) merged[camel(flag)] = value;
  for (const key of Object.keys(merged)) merged[key] = coerce(key, merged[key]);
  const config: Record<string, unknown> = {
    bundle: DEFAULT_BUNDLE,
    bundlePollSeconds: 30,
    port: 8181,
    host: "127.0.0.1",
    workers: availableParallelism(),
    roleCheck: "enforce",
    logLevel: "info",
    maxBodyBytes: 65536,
    watch: true,
    ...merged,
  };
  if (!validate(config)) {
    const problems = (validate.errors ?? []).map((e) => {
      const path = e.instancePath ? `config${e.instancePath.replace(/\//g, ".")}` : "config";
      if (e.keyword === "additionalProperties") return `${path}: unknown option "${(e.params as { additionalProperty: string }).additionalProperty}"`;
      if (e.keyword === "required") return `config.${(e.params as { missingProperty: string }).missingProperty}: is required`;
      if (e.keyword === "enum") return `${path}: must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.join(", ")}`;
      return `${path}: ${e.message ?? "is invalid"}`;
    });
    throw new ConfigError(problems);
  }
  return config as unknown as ServiceConfig;
}
