/**
 * Test support for `portier review`: a real git repository in a temporary folder holding a copy of the project's
 * data/ and policies/ and a recorded decision log, with one commit per kind of change a pull request brings:
 * a role gains a route (with the spec table test moved along, as a real change would), a tenant binding moves
 * (ORG002 from tenant B to tenant A), a policy file changes (the role check lets unsynced users onto "all synced"
 * routes). The working tree is left at the last commit. Edits are textual, so the files keep their layout and
 * line numbers as a reviewer's editor would.
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { TENANT_A, TENANT_B } from "./sample.js";

export const GAINED_ROUTE = "/v2/{codeOrganisme}/elevesAdultes/{idEleveAdulte}/calendrierScolaire";
export const DECISION_LOG = "review-logs/decisions.log";

export interface ReviewRepo {
  dir: string;
  /** Commit ids, oldest first. */
  base: string;
  roleGain: string;
  tenantMove: string;
  policyChange: string;
}

function git(dir: string, ...args: string[]): string {
  return execFileSync("git", ["-C", dir, ...args], {
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "Reviewer",
      GIT_AUTHOR_EMAIL: "reviewer@example.test",
      GIT_COMMITTER_NAME: "Reviewer",
      GIT_COMMITTER_EMAIL: "reviewer@example.test",
    },
  }).trim();
}

/** Replaces `from` by `to` in a file of the repository, failing when `from` is not there exactly once. */
export function edit(dir: string, file: string, from: string, to: string): void {
  const path = join(dir, file);
  const text = readFileSync(path, "utf8");
  if (text.split(from).length !== 2) throw new Error(`${file}: expected ${JSON.stringify(from)} exactly once`);
  writeFileSync(path, text.replace(from, to));
}

function commit(dir: string, message: string): string {
  git(dir, "add", "-A");
  git(dir, "commit", "-q", "-m", message);
  return git(dir, "rev-parse", "HEAD");
}

/** A user's decision line as `portier serve` logs it (the policy input and the answer). */
function userCall(path: string, roles: string[], synced: boolean, allow: boolean, reason: string): string {
  const token = { sub: "u-1", auth_time: 1, idp: "idp", scope: ["openid", "apiclients"], tenant_id: TENANT_A };
  const input = { method: "GET", path, token, roles, synced, role_check: "enforce" };
  return JSON.stringify({ event: "decision", revision: "logged", allow, reason, input });
}

function applicationCall(path: string, tenant: string, allow: boolean, reason: string): string {
  const token = { client_id: "m", aud: ["apiclients"], scope: ["apiclients"], tenant_id: tenant };
  const input = { method: "GET", path, token, roles: [], synced: false, role_check: "enforce" };
  return JSON.stringify({ event: "decision", revision: "logged", allow, reason, input });
}

/** What the service decided under the base policy, one line per call. */
export const LOGGED_CALLS = [
  // Denied, then allowed once enseignant_adulte gains the route.
  userCall("/v2/ORG001/elevesAdultes/7/calendrierScolaire", ["enseignant_adulte"], true, false, "role_not_allowed"),
  // Allowed before and after.
  userCall("/v2/ORG001/elevesAdultes/7/calendrierScolaire", ["eleve_adulte"], true, true, "allowed"),
  // Tenant A's application on ORG002: allowed once the binding moves.
  applicationCall("/v2/ORG002/centres", TENANT_A, false, "tenant_mismatch"),
  // Tenant B's application on ORG002: denied once the binding moves.
  applicationCall("/v2/ORG002/centres", TENANT_B, true, "allowed"),
  // An unsynced user on an "all synced" route: allowed by the policy change.
  userCall("/v1/roles", [], false, false, "not_synced"),
];

export function makeReviewRepo(): ReviewRepo {
  const dir = mkdtempSync(join(tmpdir(), "portier-review-repo-"));
  cpSync(join(PROJECT_ROOT, "policies"), join(dir, "policies"), { recursive: true });
  cpSync(join(PROJECT_ROOT, "data"), join(dir, "data"), { recursive: true });
  mkdirSync(join(dir, "review-logs"));
  writeFileSync(join(dir, DECISION_LOG), LOGGED_CALLS.join("\n") + "\n");
  git(dir, "init", "-q", "-b", "main");
  const base = commit(dir, "The project's policies and data");

  edit(
    dir,
    "data/routes.json",
    `"template": "${GAINED_ROUTE}",\n      "allowed": ["eleve_adulte"]`,
    `"template": "${GAINED_ROUTE}",\n      "allowed": ["eleve_adulte", "enseignant_adulte"]`,
  );
  edit(
    dir,
    "policies/portier/spec_table_test.rego",
    `"${GAINED_ROUTE}": ["Élève adulte"],`,
    `"${GAINED_ROUTE}": ["Élève adulte", "Enseignant adulte"],`,
  );
  const roleGain = commit(dir, "Teachers of adults see their students' school calendar");

  edit(dir, "data/tenants.json", '"codeOrganisme": ["ORG001"]', '"codeOrganisme": ["ORG001", "ORG002"]');
  edit(dir, "data/tenants.json", '"codeOrganisme": ["ORG002"]', '"codeOrganisme": []');
  const tenantMove = commit(dir, "ORG002 moves to the Centre de services scolaire des Exemples");

  edit(dir, "policies/portier/access/roles.rego", "\tinput.synced == true\n", "");
  const policyChange = commit(dir, "All synced routes: drop the synced check");
  return { dir, base, roleGain, tenantMove, policyChange };
}

/** The 1-based line of `file` holding `needle`, searching from the line holding `after` (when given). */
export function lineOf(dir: string, file: string, needle: string, after?: string): number {
  const lines = readFileSync(join(dir, file), "utf8").split("\n");
  const from = after === undefined ? 0 : lines.findIndex((l) => l.includes(after));
  const at = lines.findIndex((l, i) => i >= from && l.includes(needle));
  if (from < 0 || at < 0) throw new Error(`${file}: no line with ${needle}`);
  return at + 1;
}
