import { beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadEngine, type InProcessEngine } from "../../src/engine/index.js";
import { computeMatrix, renderMatrix, diffMatrices, renderDiff, explain, renderExplanation, samplePath, type AccessMatrix } from "../../src/review/index.js";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { requireBundle } from "../support/bundle.js";

let engine: InProcessEngine;
let matrix: AccessMatrix;
beforeAll(async () => {
  engine = (await loadEngine(requireBundle())) as InProcessEngine;
  matrix = computeMatrix(engine);
});

describe("rendering the matrix", () => {
  it("writes the committed docs/access-matrix.md byte for byte", () => {
    expect(renderMatrix(matrix, "md")).toBe(readFileSync(join(PROJECT_ROOT, "docs", "access-matrix.md"), "utf8"));
  });

  it("writes spec-like Markdown rows", () => {
    const md = renderMatrix(matrix, "md");
    expect(md).toContain("| Élève | /v2/{codeOrganisme}/elevesAdultes | Enseignant adulte | allowed |");
    expect(md).toContain("| Rôles | /v1/roles | All synced | allowed |");
    expect(md).toContain("## API product: Organisme scolaire");
  });

  it("writes CSV with one column per role and probe", () => {
    const lines = renderMatrix(matrix, "csv").trim().split("\n");
    expect(lines).toHaveLength(30);
    expect(lines[0]).toBe(`product,api,template,${matrix.columns.join(",")}`);
    expect(lines[7]).toMatch(/^Élève,Élève,\/v2\/\{codeOrganisme\}\/elevesAdultes,deny:role_not_allowed,/);
  });

  it("writes JSON and escaped HTML", () => {
    expect(JSON.parse(renderMatrix(matrix, "json")).rows).toHaveLength(29);
    const html = renderMatrix(matrix, "html");
    expect(html).toContain("Absences d&#39;un".replace("&#39;", "'"));
    expect(html).not.toMatch(/<td>[^<]*<script/);
    expect(html.match(/<tr>/g)?.length).toBe(30);
  });

  it("fills every parameter of a template", () => {
    expect(samplePath("/v2/{codeOrganisme}/ecoles/{idEcole}")).toBe("/v2/sample-codeOrganisme/ecoles/sample-idEcole");
  });
});

describe("diffing matrices", () => {
  it("finds nothing between a matrix and itself", () => {
    const d = diffMatrices(matrix, matrix);
    expect(d.changes).toEqual([]);
    expect(renderDiff(d)).toBe("no change in who may call what\n");
  });

  it("reports grants gained and lost, and routes added and removed", () => {
    const after: AccessMatrix = structuredClone(matrix);
    const row = after.rows.find((r) => r.template === "/v2/{codeOrganisme}/elevesAdultes")!;
    row.cells.eleve_adulte = { allow: true, reason: "allowed" };
    row.cells.enseignant_adulte = { allow: false, reason: "role_not_allowed" };
    after.rows = after.rows.filter((r) => r.template !== "/v1/roles");
    after.rows.push({ product: "p", api: "a", template: "/v9/new", cells: { application: { allow: true, reason: "allowed" } } });
    const d = diffMatrices(matrix, after);
    expect(d.routesAdded).toEqual(["/v9/new"]);
    expect(d.routesRemoved).toEqual(["/v1/roles"]);
    expect(d.changes).toEqual(
      expect.arrayContaining([
        { template: "/v2/{codeOrganisme}/elevesAdultes", column: "eleve_adulte", change: "gained", before: "deny (role_not_allowed)", after: "allow" },
        { template: "/v2/{codeOrganisme}/elevesAdultes", column: "enseignant_adulte", change: "lost", before: "allow", after: "deny (role_not_allowed)" },
        { template: "/v9/new", column: "application", change: "gained", before: "absent", after: "allow" },
        { template: "/v1/roles", column: "application", change: "lost", before: "allow", after: "route removed" },
      ]),
    );
    expect(renderDiff(d)).toContain("+ eleve_adulte on /v2/{codeOrganisme}/elevesAdultes: deny (role_not_allowed) -> allow");
  });
});

describe("explaining a decision", () => {
  it("normalises the path like the service and says why", () => {
    const req = { method: "get", path: "/v2/ORG001/e%CC%81coles?x=1", flow: "accessCode" as const, roles: [], synced: false, tenantId: "3f7c1a52-8d1e-4b7a-9c3e-5a2b6d8e9f01", mode: "enforce" as const };
    const d = explain(engine, req);
    expect(d).toMatchObject({ allow: false, reason: "not_synced", route: { template: "/v2/{codeOrganisme}/écoles" } });
    expect(renderExplanation(req, d)).toContain("reason:     not_synced");
  });

  it("refuses an invalid path", () => {
    const d = explain(engine, { method: "GET", path: "/v1/%2e%2e/x", flow: "application", roles: [], synced: false, mode: "enforce" });
    expect(d).toMatchObject({ allow: false, reason: "path_invalid" });
  });
});
