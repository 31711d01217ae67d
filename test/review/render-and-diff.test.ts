import { beforeAll, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { engineDeny, loadEngine, type InProcessEngine } from "../../src/engine/index.js";
import {
  computeMatrix,
  renderMatrix,
  diffMatrices,
  renderDiff,
  renderDiffMarkdown,
  hasChanges,
  explain,
  explainRequest,
  renderExplanation,
  samplePath,
  type AccessMatrix,
} from "../../src/review/index.js";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { requireBundle } from "../support/bundle.js";
import { TENANT_A, TENANT_B } from "../support/sample.js";

let engine: InProcessEngine;
let matrix: AccessMatrix;
beforeAll(async () => {
  engine = await loadEngine(requireBundle());
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
    expect((JSON.parse(renderMatrix(matrix, "json")) as { rows: unknown[] }).rows).toHaveLength(29);
    const html = renderMatrix(matrix, "html");
    expect(html).toContain("Absences d&#39;un élève jeune");
    expect(html).not.toMatch(/<td>[^<]*<script/);
    expect(html.match(/<tr class="route"/g)?.length).toBe(29);
    expect(html).toContain('<html lang="en">');
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
    after.rows.push({
      product: "p",
      api: "a",
      template: "/v9/new",
      method: "GET",
      cells: { application: { allow: true, reason: "allowed" } },
    });
    const d = diffMatrices(matrix, after);
    expect(d.routesAdded).toEqual(["/v9/new"]);
    expect(d.routesRemoved).toEqual(["/v1/roles"]);
    expect(d.changes).toEqual(
      expect.arrayContaining([
        {
          template: "/v2/{codeOrganisme}/elevesAdultes",
          method: "GET",
          column: "eleve_adulte",
          change: "gained",
          before: "deny (role_not_allowed)",
          after: "allow",
        },
        {
          template: "/v2/{codeOrganisme}/elevesAdultes",
          method: "GET",
          column: "enseignant_adulte",
          change: "lost",
          before: "allow",
          after: "deny (role_not_allowed)",
        },
        {
          template: "/v9/new",
          method: "GET",
          column: "application",
          change: "gained",
          before: "absent",
          after: "allow",
        },
        {
          template: "/v1/roles",
          method: "GET",
          column: "application",
          change: "lost",
          before: "allow",
          after: "route removed",
        },
      ]),
    );
    expect(renderDiff(d)).toContain(
      "+ eleve_adulte on /v2/{codeOrganisme}/elevesAdultes: deny (role_not_allowed) -> allow",
    );
  });

  it("reports a method newly allowed, grouped over the routes it changed on, gains first", () => {
    const after: AccessMatrix = structuredClone(matrix);
    let flipped = 0;
    for (const p of after.probes) {
      if (p.kind === "method" && p.detail === "DELETE" && p.caller === "application") {
        p.cell = { allow: true, reason: "allowed" };
        flipped++;
      }
    }
    const lost = after.probes.find(
      (p) => p.kind === "method" && p.detail === "HEAD" && p.template === "/v1/roles" && p.caller === "application",
    )!;
    lost.cell = { allow: false, reason: "method_not_allowed" };
    const d = diffMatrices(matrix, after);
    expect(hasChanges(d)).toBe(true);
    expect(d.changes).toEqual([]);
    expect(d.probeChanges[0]).toMatchObject({
      kind: "method",
      caller: "application",
      detail: "DELETE",
      change: "gained",
      before: "deny (method_not_allowed)",
      after: "allow",
    });
    expect(d.probeChanges[0]?.templates).toHaveLength(flipped);
    expect(d.probeChanges[1]).toMatchObject({ detail: "HEAD", change: "lost", templates: ["/v1/roles"] });
    expect(renderDiff(d)).toMatch(
      /^\+ DELETE by application on 29 routes \(.*\): deny \(method_not_allowed\) -> allow$/m,
    );
    expect(renderDiff(d)).toMatch(/^- HEAD by application on \/v1\/roles: allow -> deny \(method_not_allowed\)$/m);
    expect(renderDiffMarkdown(d, { before: "a", after: "b" })).toMatch(/^\| gained \| DELETE by application \| /m);
  });

  it("covers every tenant, code and other input of the policy in the probes", () => {
    expect(matrix.tenants.map((t) => t.tenant_id)).toEqual([TENANT_A, TENANT_B]);
    expect(matrix.codes).toEqual(["ORG001", "ORG002"]);
    const kinds = new Set(matrix.probes.map((p) => p.kind));
    expect([...kinds].sort()).toEqual(["method", "tenant", "token"]);
    const own = matrix.probes.filter(
      (p) =>
        p.kind === "tenant" &&
        p.caller.startsWith("application of tenant 3f7c1a52") &&
        p.detail === "codeOrganisme ORG001",
    );
    expect(own.length).toBeGreaterThan(10);
    expect(own.every((p) => p.cell.allow)).toBe(true);
    const other = matrix.probes.filter(
      (p) =>
        p.kind === "tenant" &&
        p.caller.startsWith("application of tenant 3f7c1a52") &&
        p.detail === "codeOrganisme ORG002",
    );
    expect(other.every((p) => !p.cell.allow && p.cell.reason === "tenant_mismatch")).toBe(true);
    expect(renderMatrix(matrix, "md")).toContain("## Tenant bindings");
  });
});

describe("explaining a decision", () => {
  it("normalises the path like the service and says why", () => {
    const req = {
      method: "get",
      path: "/v2/ORG001/e%CC%81coles?x=1",
      flow: "accessCode" as const,
      roles: [],
      synced: false,
      tenantId: TENANT_A,
      mode: "enforce" as const,
    };
    const d = explain(engine, req);
    expect(d).toMatchObject({ allow: false, reason: "not_synced", route: { template: "/v2/{codeOrganisme}/écoles" } });
    const e = explainRequest(engine, req);
    expect(e.decision).toEqual(d);
    expect(e.checks.map((c) => [c.check, c.outcome])).toEqual([
      ["token shape", "pass"],
      ["route", "pass"],
      ["method", "pass"],
      ["organisation code", "pass"],
      ["apiclients scope", "pass"],
      ["tenant binding", "pass"],
      ["role list", "fail"],
    ]);
    expect(e.hints).toEqual([]);
    expect(renderExplanation({ ...req, who: "x" }, e)).toContain("reason:     not_synced");
  });

  it("shows an engine deny's internal detail to the reviewer (the terminal is the operator's)", () => {
    const req = { method: "GET", path: "/v1/roles", who: "x" };
    const decision = {
      ...engineDeny("policy_error", "the policy could not make a decision"),
      detail: "RuntimeError: unreachable",
    };
    const roleList = "the deprecated role list of spec 4.3";
    const text = renderExplanation(req, { decision, checks: [], hints: [], roleList });
    expect(text).toContain("why:        the policy could not make a decision\n  detail:     RuntimeError: unreachable");
    expect(
      renderExplanation(req, { decision: engineDeny("route_unknown", "no route"), checks: [], hints: [], roleList }),
    ).not.toContain("detail:");
  });

  it("refuses an invalid path", () => {
    const d = explain(engine, {
      method: "GET",
      path: "/v1/%2e%2e/x",
      flow: "application",
      roles: [],
      synced: false,
      mode: "enforce",
    });
    expect(d).toMatchObject({ allow: false, reason: "path_invalid" });
  });
});
