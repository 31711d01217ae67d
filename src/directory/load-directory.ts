/**
 * Parses a synced-users file (a JSON array or NDJSON of { sub, tenant_id, roles }) into a Map keyed by
 * sub. Roles are mapped to catalog ids; records with unknown roles or a bad shape are reported, not kept.
 */
import { readFile } from "node:fs/promises";
import type { RoleResolver } from "./role-names.js";

export interface DirectoryEntry {
  tenant_id: string;
  roles: string[];
}

export interface DirectoryIndex {
  entries: Map<string, DirectoryEntry>;
  /** One line per refused record, e.g. `users.json record 12: unknown role "x"` (at most 100 kept). */
  problems: string[];
  rejected: number;
}

export class DirectoryLoadError extends Error {
  readonly code = "directory_invalid";
}

const MAX_PROBLEMS = 100;

export function parseDirectory(text: string, source: string, resolve: RoleResolver): DirectoryIndex {
  const entries = new Map<string, DirectoryEntry>();
  const problems: string[] = [];
  let rejected = 0;
  const report = (where: string, what: string) => {
    rejected++;
    if (problems.length < MAX_PROBLEMS) problems.push(`${source} ${where}: ${what}`);
  };
  const add = (record: unknown, where: string) => {
    if (typeof record !== "object" || record === null || Array.isArray(record)) return report(where, "must be an object");
    const r = record as Record<string, unknown>;
    if (typeof r.sub !== "string" || r.sub === "") return report(where, "sub must be a non-empty string");
    if (typeof r.tenant_id !== "string" || r.tenant_id === "") return report(where, "tenant_id must be a non-empty string");
    if (!Array.isArray(r.roles)) return report(where, "roles must be an array");
    const roles: string[] = [];
    for (const name of r.roles) {
      const id = typeof name === "string" ? resolve(name) : undefined;
      if (!id) return report(where, `unknown role ${JSON.stringify(name)}`);
      if (!roles.includes(id)) roles.push(id);
    }
    entries.set(r.sub, { tenant_id: r.tenant_id, roles });
  };
  const trimmed = text.trimStart();
  if (trimmed.startsWith("[")) {
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (err) {
      throw new DirectoryLoadError(`${source}: ${(err as Error).message}`);
    }
    (doc as unknown[]).forEach((rec, i) => add(rec, `record ${i}`));
  } else {
    let line = 0;
    let start = 0;
    while (start < text.length) {
      let end = text.indexOf("\n", start);
      if (end < 0) end = text.length;
      line++;
      const raw = text.slice(start, end).trim();
      start = end + 1;
      if (raw === "") continue;
      let rec: unknown;
      try {
        rec = JSON.parse(raw);
      } catch (err) {
        throw new DirectoryLoadError(`${source}:${line}: ${(err as Error).message}`);
      }
      add(rec, `line ${line}`);
    }
  }
  return { entries, problems, rejected };
}

export async function loadDirectoryFile(file: string, resolve: RoleResolver): Promise<DirectoryIndex> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw new DirectoryLoadError(`${file}: cannot read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  return parseDirectory(text, file, resolve);
}
