/**
 * The Rego tests have an oracle of their own (policies/portier/spec_table_test.rego, spec 4.3 written out by
 * hand): a change to data/routes.json that departs from the spec must fail `opa test` itself, not only the
 * vitest spec check. Each mutation below is valid data (it passes `portier data check`), so only the oracle
 * can catch it.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { writeBundleData } from "../../src/toolchain/build-bundle.js";
import { opaPath } from "../../src/toolchain/opa.js";
import { runPolicyTests } from "../../src/toolchain/run-policy-tests.js";
import { scratchProject } from "../support/cli.js";

interface Route {
  product: string;
  api: string;
  template: string;
  allowed: string[] | "all_synced";
}

// Routes no unit test names: before the oracle, every mutation below passed `opa test`.
const ACTIVITES_ADULTE = "/v2/{codeOrganisme}/elevesAdultes/{idEleveAdulte}/activitesHoraires";
const MOTIFS_ABSENCE = "/v2/{codeOrganisme}/ecoles/{idEcole}/motifsAbsenceEleve";
const CALENDRIER_ADULTE = "/v2/{codeOrganisme}/elevesAdultes/{idEleveAdulte}/calendrierScolaire";
const MEMBRES = "/v3/groupes/{idGroupe}/membres";
const GROUPES = "/v3/identites/{idIdentite}/groupes";

function route(routes: Route[], template: string): Route {
  const found = routes.find((r) => r.template === template);
  if (!found) throw new Error(`no route ${template}`);
  return found;
}

// How opa names a case of a data-driven test: a string key as is, other keys as compact JSON.
const oracle = (test: string, key: string | string[]) =>
  `data.portier_test.${test}[${typeof key === "string" ? key : JSON.stringify(key)}]`;

// [what, change to the route list, a failing case the oracle must report]
const mutations: [string, (routes: Route[]) => void, string][] = [
  [
    "a role removed",
    (rs) => void (route(rs, ACTIVITES_ADULTE).allowed = ["enseignant_adulte"]),
    oracle("test_user_with_one_role", [ACTIVITES_ADULTE, "eleve_adulte"]),
  ],
  [
    "a role added",
    (rs) => void (route(rs, MOTIFS_ABSENCE).allowed as string[]).push("enseignant_adulte"),
    oracle("test_user_with_one_role", [MOTIFS_ABSENCE, "enseignant_adulte"]),
  ],
  [
    "a route switched to all synced",
    (rs) => void (route(rs, CALENDRIER_ADULTE).allowed = "all_synced"),
    oracle("test_user_with_one_role", [CALENDRIER_ADULTE, "eleve_jeune"]),
  ],
  [
    "an all-synced route switched to a role list",
    (rs) => void (route(rs, MEMBRES).allowed = ["directeur_jeune"]),
    oracle("test_user_without_roles", MEMBRES),
  ],
  [
    "a route dropped",
    (rs) => void rs.splice(rs.indexOf(route(rs, GROUPES)), 1),
    oracle("test_spec_route_is_in_the_catalog", GROUPES),
  ],
];

describe("the Rego oracle for spec 4.3", { timeout: 240_000 }, () => {
  it.each(mutations)("fails opa test when data/routes.json has %s", async (_, mutate, expected) => {
    const dir = scratchProject();
    const file = join(dir, "data", "routes.json");
    const doc = JSON.parse(readFileSync(file, "utf8")) as { routes: Route[] };
    mutate(doc.routes);
    writeFileSync(file, JSON.stringify(doc, null, 2));
    const data = writeBundleData(dir, join(dir, "build", "bundle-data")); // validates the mutated data
    const report = await runPolicyTests({ opa: opaPath(), projectDir: dir, dataDir: data.dir });
    const failed = report.failed.map((c) => c.name);
    expect(failed).toContain(expected);
    // failures, not errors such as a timeout
    expect(report.failed.filter((c) => c.error !== "")).toEqual([]);
  });
});
