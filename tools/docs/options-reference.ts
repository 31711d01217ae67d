/**
 * docs/reference/options.md from the JSON Schema `portier serve` validates its configuration with
 * (configSchemaDocument, the document committed as docs/config.schema.json): one row per option with its flag,
 * environment variable, config-file key, default, accepted values and description. Reads only the schema, so it
 * follows the option table whatever shape that takes.
 */
import { configSchemaDocument } from "../../src/service/config.js";
import { GENERATED_NOTE, cell } from "./markdown.js";

interface PropertySchema {
  type?: string;
  enum?: unknown[];
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  description?: string;
}

/** `shutdownTimeout` -> `shutdown-timeout`. */
function kebab(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** What a value must be, from the schema: an enum's members, a type with its bounds. */
function accepts(s: PropertySchema): string {
  if (s.enum) return s.enum.map((v) => `\`${String(v)}\``).join(", ");
  const bounds = [
    s.minimum !== undefined && s.maximum !== undefined ? `${s.minimum} to ${s.maximum}` : "",
    s.minimum !== undefined && s.maximum === undefined ? `at least ${s.minimum}` : "",
    s.pattern === "^https?://" ? "an http(s) URL" : s.pattern ? `matching \`${s.pattern}\`` : "",
  ].filter(Boolean);
  return [s.type ?? "any", ...bounds].join(", ");
}

/**
 * The schema's description ends with "(flag --x, env PORTIER_X; default: ...)" today; when it does not, the flag
 * and variable are derived from the key as the service derives them, and the description is shown whole.
 */
function split(key: string, description: string) {
  const m = /^(.*) \(flag (--[\w-]+), env (\w+)(?:; default: (.*))?\)$/s.exec(description);
  if (m) return { text: m[1]!, flag: m[2]!, env: m[3]!, shown: m[4] ?? "none" };
  const flag = `--${kebab(key)}`;
  return { text: description, flag, env: `PORTIER_${kebab(key).toUpperCase().replace(/-/g, "_")}`, shown: "" };
}

export function optionsReference(): string {
  const doc = configSchemaDocument();
  const properties = (doc["properties"] ?? {}) as Record<string, PropertySchema>;
  const rows = Object.entries(properties)
    .filter(([key]) => key !== "$schema")
    .map(([key, s]) => {
      const { text, flag, env, shown } = split(key, s.description ?? "");
      return `| \`${flag}\` | \`${env}\` | \`${key}\` | ${cell(shown)} | ${cell(accepts(s))} | ${cell(text)} |`;
    });
  return [
    "# Options of `portier serve`",
    "",
    GENERATED_NOTE,
    "",
    "Every option is a flag, a `PORTIER_<OPTION>` environment variable or a key of the JSON file given with",
    "`--config` ([`docs/config.schema.json`](../config.schema.json) is its schema). A flag wins over the",
    "environment, which wins over the file. A value that is not accepted stops the service with exit code 2 and a",
    "line naming the option and where the value came from, for example",
    '`config.port: must be <= 65535 (from --port "70000")`.',
    "",
    typeof doc["description"] === "string" ? doc["description"] : "",
    "",
    "| Flag | Environment | Config key | Default | Accepts | What it does |",
    "|---|---|---|---|---|---|",
    ...rows,
    "",
  ].join("\n");
}
