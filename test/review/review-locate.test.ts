/**
 * Where `portier review` says a change comes from (src/review/review-locate.ts), on two source folders made by the
 * test: a role added to a route, a route added and removed, a role changed in the catalog, a tenant's codes, a
 * .rego file changed; and nothing without sources (a bundle side).
 */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CauseFinder } from "../../src/review/review-locate.js";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { edit, lineOf } from "../support/review-repo.js";
import { TENANT_A, TENANT_B } from "../support/sample.js";

function copy(): string {
  const dir = mkdtempSync(join(tmpdir(), "portier-locate-"));
  cpSync(join(PROJECT_ROOT, "policies"), join(dir, "policies"), { recursive: true });
  cpSync(join(PROJECT_ROOT, "data"), join(dir, "data"), { recursive: true });
  return dir;
}

const ROUTE = "/v2/{codeOrganisme}/elevesAdultes";

describe("CauseFinder", () => {
  it("points a role added to a route at the route's allowed line, and an untouched route at the policy change", () => {
    const base = copy();
    const head = copy();
    edit(
      head,
      "data/routes.json",
      '"allowed": ["enseignant_adulte"]',
      '"allowed": ["enseignant_adulte", "eleve_adulte"]',
    );
    const causes = new CauseFinder(base, head);
    expect(causes.grant(ROUTE, "eleve_adulte")).toEqual({
      file: "data/routes.json",
      line: lineOf(head, "data/routes.json", '"allowed"', `"${ROUTE}"`),
      why: 'allowed: ["enseignant_adulte","eleve_adulte"]',
    });
    // Nothing else changed: the route's own line is the fallback.
    expect(new CauseFinder(base, copy()).other(ROUTE)?.file).toBe("data/routes.json");
    edit(head, "policies/portier/access/roles.rego", "\tinput.synced == true\n", "");
    const rego = new CauseFinder(base, head).grant("/v1/roles", "not_synced");
    expect(rego).toEqual({
      file: "policies/portier/access/roles.rego",
      line: lineOf(base, "policies/portier/access/roles.rego", "input.synced == true"),
      why: "policy changed",
    });
  });

  it("points a route added at its template line and a route removed at the routes list", () => {
    const base = copy();
    const head = copy();
    const text = readFileSync(join(head, "data/routes.json"), "utf8");
    writeFileSync(join(head, "data/routes.json"), text.replace(`"template": "${ROUTE}"`, `"template": "${ROUTE}2"`));
    const causes = new CauseFinder(base, head);
    expect(causes.grant(`${ROUTE}2`, "enseignant_adulte")).toEqual({
      file: "data/routes.json",
      line: lineOf(head, "data/routes.json", `"${ROUTE}2"`),
      why: "route added",
    });
    expect(causes.grant(ROUTE, "enseignant_adulte")).toEqual({
      file: "data/routes.json",
      line: lineOf(head, "data/routes.json", '"routes"'),
      why: "route removed",
    });
  });

  it("points a role changed in the catalog at its line in data/roles.json", () => {
    const base = copy();
    const head = copy();
    edit(
      head,
      "data/roles.json",
      '"label": "Élève adulte", "aliases": []',
      '"label": "Élève adulte", "aliases": ["Adulte"]',
    );
    expect(new CauseFinder(base, head).grant(ROUTE, "eleve_adulte")).toEqual({
      file: "data/roles.json",
      line: lineOf(head, "data/roles.json", '"eleve_adulte"'),
      why: "role eleve_adulte changed",
    });
  });

  it("points a moved code at the line of each tenant whose codes changed", () => {
    const base = copy();
    const head = copy();
    edit(head, "data/tenants.json", '"codeOrganisme": ["ORG001"]', '"codeOrganisme": ["ORG001", "ORG002"]');
    edit(head, "data/tenants.json", '"codeOrganisme": ["ORG002"]', '"codeOrganisme": []');
    const causes = new CauseFinder(base, head);
    const line = (id: string) => lineOf(head, "data/tenants.json", id);
    expect(causes.tenant(ROUTE, "ORG002", TENANT_A)?.line).toBe(line(TENANT_A));
    expect(causes.tenant(ROUTE, "ORG002", TENANT_B)?.line).toBe(line(TENANT_B));
    // A tenant not listed: the line that now lists the code.
    expect(causes.tenant(ROUTE, "ORG002", undefined)).toEqual({
      file: "data/tenants.json",
      line: line(TENANT_A),
      why: "binding of ORG002 changed",
    });
  });

  it("locates nothing when HEAD is a bundle", () => {
    const causes = new CauseFinder(copy(), undefined);
    expect(causes.grant(ROUTE, "eleve_adulte")).toBeUndefined();
    expect(causes.tenant(ROUTE, "ORG001", TENANT_A)).toBeUndefined();
    expect(causes.other(ROUTE)).toBeUndefined();
  });
});
