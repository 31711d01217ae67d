/**
 * The Todo fixture (test/fixtures/todo: a project with writes, one route entry per method) is valid data, and
 * the policy tests' copy of its data document (policies/portier/todo_fixture_test.rego) is exactly what the
 * loader builds from it: the Rego tests of methods cannot drift from what a bundle of that project carries.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bundleData, loadCatalog } from "../../src/catalog/index.js";
import { opaPath } from "../../src/toolchain/opa.js";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { todoProject } from "../support/todo.js";

describe("the Todo fixture", () => {
  const data = join(todoProject(), "data");

  it("loads: six entries over three templates, with their methods", () => {
    const { routes } = loadCatalog(data);
    expect(routes.map((r) => [r.template, r.methods ?? null])).toEqual([
      ["/users/{userId}", null],
      ["/todos", ["GET"]],
      ["/todos", ["POST"]],
      ["/todos/{todoId}", ["PUT"]],
      ["/todos/{todoId}", ["DELETE"]],
      ["/todos", ["HEAD", "OPTIONS"]],
    ]);
  });

  it("is the data document the policy tests use", () => {
    const file = join(PROJECT_ROOT, "policies", "portier", "todo_fixture_test.rego");
    const out = execFileSync(opaPath(), ["eval", "-f", "json", "-d", file, "data.portier.todo_fixture_test.catalog"], {
      encoding: "utf8",
    });
    const rego: unknown = (JSON.parse(out) as { result: { expressions: { value: unknown }[] }[] }).result[0]
      ?.expressions[0]?.value;
    expect(rego).toEqual(JSON.parse(JSON.stringify(bundleData(loadCatalog(data)).catalog)));
  });
});
