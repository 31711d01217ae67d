/**
 * `portier test`: the policy tests with coverage, their failure report and JUnit output.
 */
import { readFileSync, appendFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { writeBundleData } from "../../src/toolchain/build-bundle.js";
import { opaPath, runOpa } from "../../src/toolchain/opa.js";
import { portierProcess, portierInProcess as portier, scratchProject } from "../support/cli.js";
import { findAll, parseXml } from "../support/xml.js";

// Each command runs in this process (portier); one test per command runs the real `portier` process
// (portierProcess), for main's printing and exit code.

// Appended to a scratch copy's catalog_test.rego: a test that prints then fails, and a data-driven test
// with one case whose route is undefined (such a case used to vanish from a set of failures).
const FAILING_TESTS = `
test_prints_then_fails if {
	print("wrong decisions:", {"Élève & <b>"})
	false
}

test_route_cases[name] if {
	some name, path in {"known": "/v1/roles", "undefined": "/nowhere"}
	data.portier.routes.match.template == path with input as {"path": path}
}
`;

function failingProject(): string {
  const dir = scratchProject();
  appendFileSync(join(dir, "policies", "portier", "catalog", "catalog_test.rego"), FAILING_TESTS);
  return dir;
}

/** OPA's own coverage figure for a project, straight from `opa test --coverage --format json`. */
async function opaCoverage(dir: string): Promise<number> {
  const data = writeBundleData(dir, join(dir, "build", "bundle-data"));
  const out = await runOpa(opaPath(), [
    "test",
    "--timeout",
    "60s",
    "--coverage",
    "--format",
    "json",
    join(dir, "policies"),
    data.dir,
  ]);
  return (JSON.parse(out.stdout) as { coverage: number }).coverage;
}

describe("portier test", { timeout: 240_000 }, () => {
  it("passes on the project with full coverage", async () => {
    const r = await portier(["test"]);
    expect(r.stdout).toMatch(/^coverage: 100\.00% \(opa\)$/m);
    expect(r.stdout).toMatch(/^policy: \d+ passed, 0 failed$/m);
    expect(r.stdout).not.toMatch(/^PASS /m);
    expect(r.code).toBe(0);
  });

  it("prints each failing test and data-driven case with file:line and what it printed, decoded", async () => {
    const r = await portier(["test", "--project", failingProject()]);
    expect(r.stdout).toMatch(
      new RegExp(
        String.raw`^FAIL .*policies\/portier\/catalog\/catalog_test\.rego:\d+ ` +
          String.raw`data\.portier\.catalog_test\.test_prints_then_fails$`,
        "m",
      ),
    );
    expect(r.stdout).toContain('\n    wrong decisions: {"Élève & <b>"}\n');
    expect(r.stdout).not.toContain(Buffer.from("wrong decisions").toString("base64").slice(0, 16));
    expect(r.stdout).toMatch(
      /^FAIL .*catalog_test\.rego:\d+ data\.portier\.catalog_test\.test_route_cases\[undefined\]$/m,
    );
    expect(r.stdout).not.toContain("test_route_cases[known]");
    expect(r.stdout).toMatch(/^policy: \d+ passed, 2 failed$/m);
    expect(r.code).toBe(1);
  });

  it("-v lists every test and case", async () => {
    const r = await portier(["test", "-v"]);
    // On failure, show what opa reported (a flake under load once left this line out).
    expect(r.stdout + r.stderr).toMatch(/^policy: \d+ passed, 0 failed$/m);
    const passed = Number(/^policy: (\d+) passed, 0 failed$/m.exec(r.stdout)?.[1]);
    expect(passed).toBeGreaterThan(0);
    expect(r.stdout.match(/^PASS \S+:\d+ data\..+$/gm)).toHaveLength(passed);
    expect(r.code).toBe(0);
  });

  it("--format junit writes JUnit XML: one testcase per test or case, failures with their output", async () => {
    const r = await portier(["test", "--project", failingProject(), "--format", "junit"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^policy: (\d+) passed, 2 failed$/m);
    const passed = Number(/^policy: (\d+) passed/m.exec(r.stderr)?.[1]);
    const root = parseXml(r.stdout);
    expect(root.name).toBe("testsuites");
    expect(root.attributes).toMatchObject({ tests: String(passed + 2 + 1), failures: "3" });
    const cases = findAll(root, "testcase");
    expect(cases).toHaveLength(passed + 2 + 1);
    const failing = cases.filter((c) => findAll(c, "failure").length > 0).map((c) => c.attributes.name);
    expect(failing).toEqual(["test_prints_then_fails", "test_route_cases[undefined]", "coverage >= 100%"]);
    const printed = cases.find((c) => c.attributes.name === "test_prints_then_fails")!;
    expect(printed.attributes).toMatchObject({
      classname: "data.portier.catalog_test",
      line: expect.stringMatching(/^\d+$/) as unknown,
    });
    expect(findAll(printed, "failure")[0]!.text).toBe('wrong decisions: {"Élève & <b>"}\n');
  });

  it("--format junit --output FILE writes the XML there and the text report to stdout", async () => {
    const dir = scratchProject();
    const file = join(dir, "policy-junit.xml");
    const r = await portier(["test", "--project", dir, "--format", "junit", "--output", file]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^policy: \d+ passed, 0 failed$/m);
    const root = parseXml(readFileSync(file, "utf8"));
    expect(root.attributes.failures).toBe("0");
    expect(findAll(root, "property").find((p) => p.attributes.name === "coverage")?.attributes.value).toBe("100");
  });

  it("refuses a --min-coverage that is not a percentage, and bad --format/--output", async () => {
    const bad = ["abc", "", "NaN", "-1", "101", "50%"];
    const runs = await Promise.all([
      ...bad.map((value) => portier(["test", `--min-coverage=${value}`])),
      portier(["test", "--format", "xml"]),
      portier(["test", "--output", "x.xml"]),
    ]);
    bad.forEach((value, i) => {
      expect(runs[i]!.code, value).toBe(2);
      expect(runs[i]!.stderr).toContain(`--min-coverage: "${value}" is not a percentage from 0 to 100`);
    });
    expect(runs[bad.length]!.stderr).toContain('--format: "xml" is not text or junit');
    expect(runs[bad.length + 1]!.stderr).toContain("--output: only with --format junit");
  });

  it("names a missing --opa binary and the cause", async () => {
    const r = await portierProcess(["test", "--opa", "/nonexistent/opa"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('cannot run opa "/nonexistent/opa": no such file (ENOENT)');
    expect(r.stdout).toBe("policy: not run (see the error above)\n");
  });

  it("names the file and line of a test that does not compile, and still closes with the policy line", async () => {
    const dir = scratchProject();
    appendFileSync(
      join(dir, "policies", "portier", "catalog", "catalog_test.rego"),
      "\ntest_broken if {\n\tunknown_function(1)\n}\n",
    );
    const r = await portier(["test", "--project", dir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/opa test did not run \(exit \d+\):\n.*catalog_test\.rego:\d+/);
    expect(r.stdout.trimEnd().split("\n").at(-1)).toBe("policy: not run (see the error above)");
  });

  it("fails when coverage drops below 100%, with OPA's own figure", async () => {
    const dir = scratchProject();
    appendFileSync(
      join(dir, "policies", "portier", "catalog", "catalog.rego"),
      '\nuntested := "never evaluated by a test" if input.nothing\n',
    );
    const r = await portier(["test", "--project", dir]);
    expect(r.stdout).toMatch(/^not covered: .*catalog\.rego:\d+$/m);
    const figure = await opaCoverage(dir);
    expect(figure).toBeLessThan(100);
    expect(r.stdout).toContain(`coverage: ${figure.toFixed(2)}% (opa)`);
    expect(r.stdout).toContain(`coverage ${figure.toFixed(2)}% is below the required 100%`);
    expect(r.code).toBe(1);
    expect((await portier(["test", "--project", dir, "--min-coverage", String(Math.floor(figure))])).code).toBe(0);
  });
});
