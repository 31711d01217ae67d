import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { loadEngine } from "../../src/engine/index.js";
import { computeMatrix, type AccessMatrix } from "../../src/review/index.js";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { requireBundle } from "../support/bundle.js";
import { parseSpecSection43, type SpecRoute } from "../support/spec-4-3.js";

// Spec labels -> role ids. Labels come from the role catalog; the spec's own wording variants must map too.
const catalog = JSON.parse(readFileSync(join(PROJECT_ROOT, "data", "roles.json"), "utf8")) as {
  roles: { id: string; label: string; aliases: string[] }[];
};
const idOfLabel = new Map(
  catalog.roles.flatMap((r) => [r.label, ...r.aliases].map((l) => [l.normalize("NFC"), r.id] as const)),
);

let spec: SpecRoute[];
let matrix: AccessMatrix;

beforeAll(async () => {
  spec = parseSpecSection43();
  matrix = computeMatrix(await loadEngine(requireBundle()));
});

describe("the compiled policy against spec 4.3", () => {
  it("parses the 29 routes of the spec", () => {
    expect(spec).toHaveLength(29);
    expect(spec.filter((r) => r.allowed === "all synced")).toHaveLength(18);
  });

  it("knows every spec label", () => {
    const labels = new Set(spec.flatMap((r) => (r.allowed === "all synced" ? [] : r.allowed)));
    expect([...labels].filter((l) => !idOfLabel.has(l.normalize("NFC")))).toEqual([]);
  });

  it("lists the same routes, in spec order, with product and API names", () => {
    expect(matrix.rows.map((r) => [r.product, r.api, r.template])).toEqual(
      spec.map((r) => [r.product, r.api, r.template]),
    );
  });

  it("agrees cell for cell (every role, synced/unsynced users, application flow)", () => {
    const disagreements: string[] = [];
    spec.forEach((route, i) => {
      const row = matrix.rows[i];
      if (!row) return disagreements.push(`missing row for ${route.template}`);
      const allowedIds = new Set(
        route.allowed === "all synced"
          ? catalog.roles.map((r) => r.id)
          : route.allowed.map((l) => idOfLabel.get(l.normalize("NFC"))),
      );
      const expected: Record<string, boolean> = {
        synced_without_role: route.allowed === "all synced",
        not_synced: false,
        application: true,
      };
      for (const role of catalog.roles) expected[role.id] = allowedIds.has(role.id);
      for (const [column, allow] of Object.entries(expected)) {
        if (row.cells[column]?.allow !== allow)
          disagreements.push(
            `${route.template} / ${column}: spec ${allow}, ` +
              `policy ${row.cells[column]?.allow} (${row.cells[column]?.reason})`,
          );
      }
    });
    expect(disagreements).toEqual([]);
    expect(matrix.columns).toHaveLength(catalog.roles.length + 3);
  });
});
