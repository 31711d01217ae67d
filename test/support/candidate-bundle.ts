/**
 * Test support: a real candidate bundle, built by `portier bundle build` from a scratch copy of the project whose
 * data/routes.json was edited (a role added to a route, one taken away, a route dropped), as a policy change
 * under review would be. The shadow tests and benchmark try it beside the project's bundle.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { portierProcess, scratchProject } from "./cli.js";

export interface RoutesDocument {
  routes: { template: string; allowed: string[] | "all_synced" }[];
}

/** What CANDIDATE_EDIT changes, for the tests' expectations. */
export const CANDIDATE_CHANGES = {
  /** enseignant_jeune loses it: a teacher's call becomes new_deny. */
  lost: "/v2/{codeOrganisme}/elevesJeunes/{idEleveJeune}/absences",
  /** enseignant_jeune gains it: a teacher's call becomes new_allow. */
  gained: "/v2/{codeOrganisme}/elevesAdultes/{idEleveAdulte}/calendrierScolaire",
  /** Dropped: a teacher's call goes from role_not_allowed to route_unknown (other_reason). */
  dropped: "/v2/{codeOrganisme}/elevesAdultes",
};

export function candidateEdit(doc: RoutesDocument): void {
  const route = (template: string) => {
    const r = doc.routes.find((x) => x.template === template);
    if (!r || r.allowed === "all_synced") throw new Error(`data/routes.json: no role-listed route ${template}`);
    return r as { allowed: string[] };
  };
  route(CANDIDATE_CHANGES.lost).allowed = route(CANDIDATE_CHANGES.lost).allowed.filter(
    (id) => id !== "enseignant_jeune",
  );
  route(CANDIDATE_CHANGES.gained).allowed.push("enseignant_jeune");
  doc.routes = doc.routes.filter((r) => r.template !== CANDIDATE_CHANGES.dropped);
}

/** Builds the project with data/routes.json edited by `edit` into `out` (a scratch copy; the project is untouched). */
export async function buildCandidateBundle(
  out: string,
  edit: (doc: RoutesDocument) => void = candidateEdit,
): Promise<string> {
  const dir = scratchProject();
  const file = join(dir, "data", "routes.json");
  const doc = JSON.parse(readFileSync(file, "utf8")) as RoutesDocument;
  edit(doc);
  writeFileSync(file, JSON.stringify(doc, null, 2));
  const built = await portierProcess(["bundle", "build", "--project", dir, "--out", out]);
  if (built.code !== 0) throw new Error(`portier bundle build of the candidate failed: ${built.stderr}${built.stdout}`);
  return out;
}
