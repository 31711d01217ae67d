/**
 * Test support: parses section 4.3 of the shared spec (the route/role tables) straight from its
 * Markdown, so tests compare the policy with what the spec says, not with our own data files.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";

export const SPEC_FILE = join(PROJECT_ROOT, "..", "shared", "spec", "identity-token-service.md");

export interface SpecRoute {
  product: string;
  api: string;
  template: string;
  /** Role labels as the spec writes them, or "all synced". */
  allowed: string[] | "all synced";
}

export function parseSpecSection43(text = readFileSync(SPEC_FILE, "utf8")): SpecRoute[] {
  const start = text.indexOf("### 4.3");
  const end = text.indexOf("\n## 5.", start);
  if (start === -1 || end === -1) throw new Error(`${SPEC_FILE}: section 4.3 not found`);
  const section = text.slice(start, end);
  const routes: SpecRoute[] = [];
  let product = "";
  let allSynced = false;
  for (const line of section.split("\n")) {
    const heading = /^\*\*API product: (.+?)\*\*(.*)$/.exec(line);
    if (heading) {
      product = (heading[1] as string).trim();
      allSynced = /All synced/i.test(heading[2] ?? "");
      continue;
    }
    if (!line.startsWith("|") || /^\|\s*(API|---)/.test(line)) continue;
    const cells = line
      .split("|")
      .slice(1, -1)
      .map((c) => c.trim());
    const [api, template, roles] = cells as [string, string, string | undefined];
    routes.push({
      product,
      api,
      template,
      allowed: allSynced
        ? "all synced"
        : (roles ?? "")
            .split(";")
            .map((r) => r.trim())
            .filter(Boolean),
    });
  }
  return routes;
}
