import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readBundle } from "../../src/engine/read-bundle.js";
import { annotatedEntrypoints, buildBundle } from "../../src/toolchain/build-bundle.js";
import { opaPath } from "../../src/toolchain/opa.js";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { portierInProcess as portier, scratchProject } from "../support/cli.js";
import { checkPath } from "../../src/toolchain/check-routes.js";
import { DataError } from "../../src/catalog/index.js";
import type { Catalog } from "../../src/catalog/load-catalog.js";

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

  it("uses the list given for policies older than the annotations, and only then", async () => {
    const dir = scratchProject();
    const old = ["portier/catalog", "portier/decision"];
    expect(await annotatedEntrypoints(opaPath(), join(dir, "policies"), old)).not.toEqual(old);
    for (const file of [
      ["decision.rego"],
      ["catalog", "catalog.rego"],
      ["explain", "checks.rego"],
      ["log", "log.rego"],
    ])
      edit(join(dir, "policies", "portier", ...file), (t) => t.replace(ENTRYPOINT_ANNOTATION, ""));
    expect(await annotatedEntrypoints(opaPath(), join(dir, "policies"), old)).toEqual(old);
  });
});

describe("no bundle whose policy fails on a route of its own catalog", () => {
  /** A scratch project whose routes.json gains the route with this template. */
  function withRoute(template: string): string {
    const dir = scratchProject();
    edit(join(dir, "data", "routes.json"), (t) => {
      const doc = JSON.parse(t) as { routes: unknown[] };
      doc.routes.push({ product: "p", api: "a", template, allowed: ["eleve_adulte"] });
      return JSON.stringify(doc, null, 2);
    });
    return dir;
  }

  it(
    "a parameter named twice: refused by data check, " + "bundle build and diff (exit 2), not reported as a grant",
    async () => {
      const dir = withRoute("/v2/{codeOrganisme}/{codeOrganisme}");
      const message = /routes\.json:\d+: routes\[29\]\.template: parameter \{codeOrganisme\} appears twice/;
      for (const args of [
        ["data", "check", "--project", dir],
        ["bundle", "build", "--project", dir, "--out", join(dir, "b.tar.gz")],
        ["diff", PROJECT_ROOT, dir],
      ]) {
        const r = await portier(args);
        expect(r.stderr, args.join(" ")).toMatch(message);
        expect(r.code, args.join(" ")).toBe(2);
        expect(r.stdout).not.toContain("/v2/{codeOrganisme}/{codeOrganisme}");
      }
      expect(existsSync(join(dir, "b.tar.gz"))).toBe(false);
    },
    60_000,
  );

  it(
    "the class: a policy that errors on one route refuses the " +
      "build with the field and the reason, and leaves no bundle",
    async () => {
      const dir = scratchProject();
      // Valid Rego that opa check accepts, but whose match object conflicts for one route only.
      edit(join(dir, "policies", "portier", "routes", "match.rego"), (t) =>
        t.replace(
          '\t"template": _shown.template,\n',
          '\t"template": _shown.template,\n\t"probe": {"k": v | some v in [1, 2]; _shown.template == "/v1/roles"},\n',
        ),
      );
      const out = join(dir, "build", "bundle.tar.gz");
      const err = await buildBundle({ opa: opaPath(), projectDir: dir, workDir: join(dir, "build"), out }).catch(
        (e: unknown) => e,
      );
      const index = (JSON.parse(readFileSync(join(dir, "data", "routes.json"), "utf8")) as Catalog).routes.findIndex(
        (r) => r.template === "/v1/roles",
      );
      expect(err).toBeInstanceOf(DataError);
      expect((err as Error).message).toMatch(
        new RegExp(
          `data/routes\\.json:\\d+: routes\\[${index}\\]\\.template: the compiled policy cannot decide a call to it ` +
            `\\(a user token, GET /v1/roles\\): policy_error: .*match\\.rego:\\d+:\\d+: object insert conflict`,
        ),
      );
      expect(readdirSync(join(dir, "build")).filter((f) => f.includes("tar.gz"))).toEqual([]);
    },
    60_000,
  );

  it("the check path gives each parameter its own value", () => {
    expect(checkPath("/v2/{a}/x/{b}")).toBe("/v2/Check2/x/Check4");
    expect(checkPath("/v1/roles")).toBe("/v1/roles");
  });
});
