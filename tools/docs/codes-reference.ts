/**
 * docs/reference/codes.md: every code Portier can answer or print, gathered from the sources: the reasons the
 * policy gives (`_deny(status, "reason", ...)` and `"reason": "..."` in policies/, tests left out), the answers the
 * engine and the service make themselves (engineDeny, refuse, `reason:`/`error:` literals in src/engine and
 * src/service), and the static `code`/`codes` of every class that extends PortierError (found as the error model's
 * test finds them, then imported). Each code's meaning comes from code-notes.ts; a code without a note, or a note
 * without a code, is an error.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { CODE_NOTES } from "./code-notes.js";
import { GENERATED_NOTE, cell } from "./markdown.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

interface Found {
  code: string;
  status?: string;
  where: Set<string>;
}

function files(dir: string, keep: (name: string) => boolean): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name), keep) : keep(e.name) ? [join(dir, e.name)] : [],
  );
}

class Codes {
  readonly byCode = new Map<string, Found>();
  add(code: string, where: string, status?: string): void {
    let f = this.byCode.get(code);
    if (!f) this.byCode.set(code, (f = { code, where: new Set() }));
    f.where.add(where);
    if (status && !f.status) f.status = status;
  }
}

function policyReasons(into: Codes): void {
  for (const file of files(join(ROOT, "policies"), (n) => n.endsWith(".rego") && !n.endsWith("_test.rego"))) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/_deny\((\d+), "(\w+)"/g)) into.add(m[2]!, "policy", m[1]);
    for (const m of text.matchAll(/"reason": "(\w+)"/g)) into.add(m[1]!, "policy", m[1] === "allowed" ? "200" : "403");
  }
}

function serviceAnswers(into: Codes): void {
  for (const folder of ["src/engine", "src/service"]) {
    for (const file of files(join(ROOT, folder), (n) => n.endsWith(".ts"))) {
      const text = readFileSync(file, "utf8");
      const where = folder === "src/engine" ? "engine" : "service";
      for (const m of text.matchAll(/engineDeny\(\s*"(\w+)"[^;]*?(\d{3})?\)/g)) into.add(m[1]!, where, m[2]);
      for (const m of text.matchAll(/refuse\(\s*(\d{3}),\s*"(\w+)"/g)) into.add(m[2]!, where, m[1]);
      for (const m of text.matchAll(/\b(?:reason|error): "(\w+)"/g)) into.add(m[1]!, where);
    }
  }
}

interface ErrorClass {
  code: string;
  codes: readonly string[];
}

function isErrorClass(value: unknown): value is ErrorClass {
  return (
    typeof value === "function" &&
    "code" in value &&
    typeof value.code === "string" &&
    "codes" in value &&
    Array.isArray(value.codes)
  );
}

/**
 * Every class extending PortierError in src (transitively), imported to read its static code and codes. The
 * token verification family's codes are decision reasons (401), so they go to `reasons`.
 */
async function errorClasses(into: Codes, reasons: Codes): Promise<void> {
  const declared: [string, string, string][] = [];
  for (const file of files(join(ROOT, "src"), (n) => n.endsWith(".ts") && !n.endsWith(".d.ts")))
    for (const m of readFileSync(file, "utf8").matchAll(/\bclass\s+(\w+)\s+extends\s+(\w+)/g))
      declared.push([file, m[1]!, m[2]!]);
  const errors = new Map<string, string>();
  for (let grew = true; grew;) {
    grew = false;
    for (const [file, name, base] of declared)
      if ((base === "PortierError" || errors.has(base)) && !errors.has(name)) {
        errors.set(name, file);
        grew = true;
      }
  }
  for (const [name, file] of errors) {
    const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    const cls = module[name];
    if (!isErrorClass(cls)) throw new Error(`${relative(ROOT, file)}: ${name} is not an exported error class`);
    const family = cls.codes.length > 1 || cls.codes[0] !== cls.code;
    into.add(cls.code, family ? `${name} (family)` : name);
    if (family && name === "TokenError") for (const code of cls.codes) reasons.add(code, name, "401");
    else if (family) for (const code of cls.codes.filter((c) => c !== cls.code)) into.add(code, name);
  }
}

export async function codesReference(): Promise<string> {
  const decisions = new Codes();
  policyReasons(decisions);
  serviceAnswers(decisions);
  const errors = new Codes();
  await errorClasses(errors, decisions);
  const all = new Set([...decisions.byCode.keys(), ...errors.byCode.keys()]);
  const missing = [...all].filter((c) => !(c in CODE_NOTES));
  const stale = Object.keys(CODE_NOTES).filter((c) => !all.has(c));
  if (missing.length || stale.length)
    throw new Error(
      [
        missing.length ? `codes without a note in tools/docs/code-notes.ts: ${missing.join(", ")}` : "",
        stale.length ? `notes in tools/docs/code-notes.ts for codes no source has: ${stale.join(", ")}` : "",
      ]
        .filter(Boolean)
        .join("\n"),
    );
  const table = (codes: Codes, anchor: string, order: (a: Found, b: Found) => number) => [
    "| Code | Status | Where | What it means, what to do |",
    "|---|---|---|---|",
    ...[...codes.byCode.values()]
      .sort(order)
      .map(
        (f) =>
          `| <a id="${anchor}-${f.code}"></a>\`${f.code}\` ` +
          `| ${f.status ?? ""} | ${[...f.where].sort().join(", ")} | ${cell(CODE_NOTES[f.code]!)} |`,
      ),
  ];
  const noteOrder = Object.keys(CODE_NOTES);
  const byNote = (a: Found, b: Found) => noteOrder.indexOf(a.code) - noteOrder.indexOf(b.code);
  return [
    "# Reasons and error codes",
    "",
    GENERATED_NOTE,
    "",
    "Every decision carries a `reason` (and a `message` a person can read); every error class has a stable",
    "`code`. Both are listed here with what they mean and what to do. " +
      "[Troubleshooting](../operating/troubleshooting.md)",
    "starts from what you see (`/ready`, a start-up line, a deny) and links here.",
    "",
    "## Decision reasons and refusals",
    "",
    "The `reason` of `POST /decide` answers, of the `X-Portier-Reason` header, of the decision log and of",
    "`portier_decisions_total`; the `error` of a refused request. `policy`: the policy's checks; `engine`,",
    "`service`: answers Portier makes before or instead of the policy; `TokenError`: token verification (401 with",
    "`WWW-Authenticate`).",
    "",
    ...table(decisions, "reason", byNote),
    "",
    "## Error codes",
    "",
    "The `code` of each error class: in the service's log lines (`*_refused` events, start-up failures), in `/ready`",
    "problems, and on the terminal of a command. A family (`TokenError`, `EngineLoadError`, `OAuthError`) carries",
    "one of its codes.",
    "",
    ...table(errors, "error", byNote),
    "",
  ].join("\n");
}
