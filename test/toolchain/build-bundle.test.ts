import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readBundle } from "../../src/engine/read-bundle.js";
import { annotatedEntrypoints, buildBundle } from "../../src/toolchain/build-bundle.js";
import { opaPath } from "../../src/toolchain/opa.js";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { scratchProject } from "../support/cli.js";

const ENTRYPOINT_ANNOTATION = "# entrypoint: true\n";

function edit(file: string, change: (text: string) => string): void {
  const before = readFileSync(file, "utf8");
  const after = change(before);
  expect(after).not.toBe(before);
  writeFileSync(file, after);
}

describe("entrypoints from # METADATA annotations", () => {
  it("are the four annotated in the project's policies", async () => {
    expect(await annotatedEntrypoints(opaPath(), join(PROJECT_ROOT, "policies"))).toEqual([
      "portier/catalog",
      "portier/decision",
      "portier/explain/checks",
      "portier/log/rules",
    ]);
  });

  it("follow the annotations: one removed, one added, one in a test file ignored", async () => {
    const dir = scratchProject();
    const policies = join(dir, "policies", "portier");
    edit(join(policies, "decision.rego"), (t) => t.replace(ENTRYPOINT_ANNOTATION, ""));
    edit(join(policies, "access", "roles.rego"), (t) =>
      t.replace("\nverdict := ", `\n# METADATA\n${ENTRYPOINT_ANNOTATION}verdict := `),
    );
    edit(join(policies, "catalog", "catalog_test.rego"), (t) =>
      t.replace("\ntest_lists_roles_with_labels", `\n# METADATA\n${ENTRYPOINT_ANNOTATION}test_lists_roles_with_labels`),
    );
    expect(await annotatedEntrypoints(opaPath(), join(dir, "policies"))).toEqual([
      "portier/access/verdict",
      "portier/catalog",
      "portier/explain/checks",
      "portier/log/rules",
    ]);
  });

  it("is what the bundle is built for", async () => {
    const dir = scratchProject();
    const out = join(dir, "b.tar.gz");
    const built = await buildBundle({ opa: opaPath(), projectDir: dir, workDir: join(dir, "build"), out });
    expect(built.entrypoints).toEqual([
      "portier/catalog",
      "portier/decision",
      "portier/explain/checks",
      "portier/log/rules",
    ]);
    const bundle = await readBundle(readFileSync(out), out, []);
    expect([...bundle.entrypoints].sort()).toEqual(built.entrypoints);
  });

  it("refuses to build when no entrypoint is annotated", async () => {
    const dir = scratchProject();
    edit(join(dir, "policies", "portier", "decision.rego"), (t) => t.replace(ENTRYPOINT_ANNOTATION, ""));
    edit(join(dir, "policies", "portier", "catalog", "catalog.rego"), (t) => t.replace(ENTRYPOINT_ANNOTATION, ""));
    edit(join(dir, "policies", "portier", "explain", "checks.rego"), (t) => t.replace(ENTRYPOINT_ANNOTATION, ""));
    edit(join(dir, "policies", "portier", "log", "log.rego"), (t) => t.replace(ENTRYPOINT_ANNOTATION, ""));
    await expect(annotatedEntrypoints(opaPath(), join(dir, "policies"))).rejects.toThrow(
      /no rule or package is annotated "# METADATA" with "entrypoint: true"/,
    );
  });
});
