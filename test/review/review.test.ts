/**
 * `portier review BASE [HEAD]` end to end on a real git repository made by the test (test/support/review-repo.ts):
 * a role gains a route, a tenant binding moves, a policy file changes. Every format is checked: md (the first line
 * and the rows), json (before/after as data, the causing lines), sarif (validated with ajv against the SARIF 2.1.0
 * JSON schema that @microsoft/jest-sarif ships), junit (failing where --fail-on fails), GitHub annotations; the
 * recorded decisions replayed under HEAD; --fail-on and the exit codes (2 when the review cannot answer).
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import Ajv04Module from "ajv-draft-04";
import addFormatsModule from "ajv-formats";
import { beforeAll, describe, expect, it } from "vitest";
import { portierInProcess as portier, portierProcess, scratchProject } from "../support/cli.js";
import { DECISION_LOG, GAINED_ROUTE, edit, lineOf, makeReviewRepo, type ReviewRepo } from "../support/review-repo.js";
import { TENANT_A, TENANT_B } from "../support/sample.js";
import type { ReviewReport } from "../../src/review/index.js";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";

// Both are CommonJS; their default exports arrive wrapped under NodeNext.
const Ajv04 = Ajv04Module.default;
const addFormats = addFormatsModule.default;
const SARIF_SCHEMA = createRequire(import.meta.url).resolve("@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json");

function validateSarif(text: string): { errors: string; results: SarifResult[] } {
  // The schema's patterns are ECMA-262 without the u flag (one, for a language tag, is not valid with it).
  const ajv = new Ajv04({ allErrors: true, strict: false, unicodeRegExp: false });
  addFormats(ajv);
  const validate = ajv.compile(JSON.parse(readFileSync(SARIF_SCHEMA, "utf8")) as object);
  const doc = JSON.parse(text) as { runs: { results: SarifResult[] }[] };
  validate(doc);
  return { errors: ajv.errorsText(validate.errors), results: doc.runs[0]?.results ?? [] };
}

interface SarifResult {
  ruleId: string;
  level: string;
  message: { text: string };
  locations?: { physicalLocation: { artifactLocation: { uri: string }; region: { startLine: number } } }[];
}

const where = (r: SarifResult) => {
  const p = r.locations?.[0]?.physicalLocation;
  return p ? `${p.artifactLocation.uri}:${p.region.startLine}` : "";
};

let repo: ReviewRepo;
const inRepo = (...args: string[]) => portier(["review", "--project", repo.dir, ...args]);

beforeAll(() => {
  repo = makeReviewRepo();
});

describe("portier review: a role gains a route", () => {
  it(
    "reports one gained grant at the route's allowed " + "line, the call it opens, and fails on new allows only",
    async () => {
      const log = join(repo.dir, DECISION_LOG);
      const r = await inRepo(repo.base, repo.roleGain, "--format", "json", "--log", log);
      expect(r.stderr).toBe("");
      const report = JSON.parse(r.stdout) as ReviewReport;
      expect(report.summary).toBe("1 grant gained, 0 lost; 1 recorded call would now be allowed, 0 denied");
      expect(report.rows).toHaveLength(1);
      expect(report.rows[0]).toMatchObject({
        change: "gained",
        risk: "normal",
        callerKind: "role",
        role: "enseignant_adulte",
        caller: "Enseignant adulte",
        request: "GET",
        routes: [{ product: "Élève", api: "Calendrier scolaire d'un élève", template: GAINED_ROUTE }],
        before: { allow: false, reason: "role_not_allowed" },
        after: { allow: true, reason: "allowed" },
        causes: [{ file: "data/routes.json", line: lineOf(repo.dir, "data/routes.json", '"allowed"', GAINED_ROUTE) }],
        failing: true,
      });
      // The people it reaches: the sample directory's teacher of adults, and the subject the log saw.
      const teacher = "sub 65097fda-39b3-4683-8c2b-45a5a9006199 (tenant " + TENANT_A + ")";
      expect(report.rows[0]?.people).toEqual({
        directory: { count: 1, shown: [teacher] },
        seen: { count: 1, shown: [`sub u-1 (tenant ${TENANT_A})`] },
      });
      expect(report.tests).toMatchObject({ failed: [], coverage: 100 });
      expect(report.tests?.passed).toBeGreaterThan(100);
      expect(report.replay?.rows).toEqual([
        expect.objectContaining({
          change: "newly_allowed",
          count: 1,
          roles: ["enseignant_adulte"],
          risk: "normal",
          subjects: { count: 1, shown: [`sub u-1 (tenant ${TENANT_A})`] },
        }),
      ]);
      // A directory of more people than a row shows: the first five, and the count.
      const many = join(repo.dir, "many.ndjson");
      const people = Array.from({ length: 8 }, (_, i) =>
        JSON.stringify({ sub: `t${i}`, tenant_id: TENANT_B, roles: ["Enseignant adulte"] }),
      );
      writeFileSync(many, people.join("\n") + "\n");
      expect((await portier(["directory", "seal", many])).code).toBe(0);
      const md = await inRepo(repo.base, repo.roleGain, "--directory", many);
      expect(md.stdout).toContain(
        `| directory: 8 (sub t0 (tenant ${TENANT_B}), sub t1 (tenant ${TENANT_B}), sub t2 (tenant ${TENANT_B}), ` +
          `sub t3 (tenant ${TENANT_B}), sub t4 (tenant ${TENANT_B}) and 3 more) |`,
      );
      expect(report.base).toMatchObject({ ref: repo.base, kind: "git", commit: repo.base });
      expect(report.findings).toEqual(["--fail-on new-allows matched 2 changes"]);
      expect(r.code).toBe(1);

      // Not a high-risk change: --fail-on high-risk passes; the reverse (a grant lost) passes the default.
      const high = await inRepo(repo.base, repo.roleGain, "--fail-on", "high-risk", "--format", "junit");
      expect(high.stdout).toMatch(/<testsuites name="portier review" tests="2" failures="0">/);
      expect(high.code).toBe(0);
      // Back to the base, given as a bundle (the project's own policy; a bundle has no tests to run).
      const bundle = join(repo.dir, "base-policy.tar.gz");
      expect((await portier(["bundle", "build", "--project", PROJECT_ROOT, "--out", bundle])).code).toBe(0);
      const back = await inRepo(repo.roleGain, bundle, "--format", "md");
      expect(back.stdout.split("\n")[2]).toBe("**0 grants gained, 1 lost; no decision log replayed**");
      expect(back.stdout).toContain("| normal | lost | Enseignant adulte (enseignant_adulte) | GET |");
      expect(back.stdout).toContain("Policy tests: not run (HEAD `" + bundle + "` is a bundle, not sources).");
      expect(back.code).toBe(0);
      expect((await inRepo(repo.roleGain, bundle, "--fail-on", "any-change")).code).toBe(1);
    },
    300_000,
  ); // three reviews that run the policy tests, on a shared machine
});

describe("portier review: a tenant binding moves", () => {
  it("marks the binding moved to another tenant high risk, located at each tenant's line, in valid SARIF", async () => {
    const r = await inRepo(repo.roleGain, repo.tenantMove, "--format", "sarif", "--fail-on", "high-risk");
    const { errors, results } = validateSarif(r.stdout);
    expect(errors).toBe("No errors");
    const tenantLine = (id: string) => lineOf(repo.dir, "data/tenants.json", id);
    const gained = results.filter((x) => x.ruleId === "portier/grant-gained-high-risk");
    expect(gained.length).toBe(2); // the application and the user of tenant A
    for (const g of gained) {
      expect(g.ruleId).toBe("portier/grant-gained-high-risk");
      expect(g.message.text).toMatch(
        new RegExp(`^high risk: .* of tenant ${TENANT_A} .* gained GET, codeOrganisme ORG002`),
      );
      expect(where(g)).toBe(`data/tenants.json:${tenantLine(TENANT_A)}`);
    }
    const lost = results.filter((x) => x.ruleId === "portier/grant-lost");
    expect(lost.length).toBe(2);
    for (const l of lost) expect(where(l)).toBe(`data/tenants.json:${tenantLine(TENANT_B)}`);
    // The tenant move breaks tests that pin ORG002 to tenant B: the review says so, each at its rule, and fails.
    const tests = results.filter((x) => x.ruleId === "portier/policy-test-failed");
    expect(tests.length).toBeGreaterThan(0);
    for (const t of tests) {
      expect(t.level).toBe("error");
      expect(where(t)).toMatch(/^policies\/portier\/[a-z_/]+_test\.rego:\d+$/);
    }
    expect(results).toHaveLength(4 + tests.length);
    expect(r.code).toBe(1);
  }, 180_000);
});

describe("portier review: a policy file changes", () => {
  it("puts the first line on the high-risk rows at the changed .rego line, in md, junit and annotations", async () => {
    // HEAD defaults to the working tree, left at the policy change.
    const log = join(repo.dir, DECISION_LOG);
    const md = join(repo.dir, "review.md");
    const junit = join(repo.dir, "review.xml");
    const sarif = join(repo.dir, "review.sarif");
    const r = await portierProcess(
      ["review", repo.tenantMove, "--log", log, "--output", md, "--output", junit, "--output", sarif, "--format", "md"],
      { cwd: repo.dir, env: { GITHUB_ACTIONS: "true" } },
    );
    // Every finding is a SARIF result: grants, recorded calls newly allowed and denied, failing policy tests.
    const { errors, results } = validateSarif(readFileSync(sarif, "utf8"));
    expect(errors).toBe("No errors");
    const rules = new Set(results.map((x) => x.ruleId));
    for (const id of [
      "portier/grant-gained-high-risk",
      "portier/call-newly-allowed-high-risk",
      "portier/call-newly-denied",
      "portier/policy-test-failed",
    ])
      expect(rules).toContain(id);
    const denied = results.find((x) => x.ruleId === "portier/call-newly-denied");
    expect(where(denied!)).toMatch(/decisions\.log:4$/);
    const failedTest = results.find((x) => x.ruleId === "portier/policy-test-failed");
    expect(where(failedTest!)).toMatch(/^policies\/portier\/.*_test\.rego:\d+$/);
    expect(failedTest?.message.text).not.toMatch(/: $/);
    const text = readFileSync(md, "utf8");
    expect(r.stdout).toBe(text);
    const lines = text.split("\n");
    expect(lines[0]).toBe(`### Portier review: \`${repo.tenantMove}\` -> \`working tree\``);
    expect(lines[2]).toMatch(
      /^\*\*\d+ grants gained \(\d+ high risk\), 0 lost; 3 recorded calls would now be allowed, 1 denied\*\*$/,
    );
    // The line the policy change removed, as numbered in the base (the project's own file).
    const regoLine = lineOf(PROJECT_ROOT, "policies/portier/access/roles.rego", "input.synced == true");
    const row = lines.find((l) => l.includes("| user not synced |"));
    expect(row).toMatch(
      /^\| \*\*high\*\* \(fails\) \| gained \| user not synced \| GET \| .* \| deny \(not_synced\) \| allow \|/,
    );
    expect(row).toContain(`\`policies/portier/access/roles.rego:${regoLine}\``);
    expect(text).toMatch(/^Policy tests on `working tree`: \d+ passed, [1-9]\d* failed; coverage not measured/m);
    expect(text).toMatch(/^\| \*\*high\*\* \(fails\) \| newly allowed \| 1 \| `\/v1\/roles` \| accessCode \| none \|/m);
    expect(text).toMatch(
      new RegExp(
        String.raw`Result with \x60--fail-on new-allows\x60: \*\*fails\*\*: ` +
          String.raw`--fail-on new-allows matched \d+ changes; \d+ policy tests failed`,
      ),
    );

    const xml = readFileSync(junit, "utf8");
    const failures = Number(/<testsuites [^>]*failures="(\d+)"/.exec(xml)?.[1]);
    expect(failures).toBeGreaterThan(1);
    expect(xml).toMatch(
      new RegExp(
        String.raw`<testcase classname="portier\.review\.grants" name="high risk: user not synced gained ` +
          String.raw`GET on ` +
          String.raw`[^"]*">\n\s+<failure `,
      ),
    );
    expect(xml).toMatch(
      new RegExp(
        String.raw`<testcase classname="portier\.review\.tests" name="policy tests on working tree: \d+ ` +
          String.raw`passed, \d+ ` +
          String.raw`failed">\n\s+<failure `,
      ),
    );

    expect(r.stderr).toMatch(
      new RegExp(
        `^::error file=policies/portier/access/roles.rego,line=${regoLine},title=Portier%3A grant gained \\(high ` +
          `risk\\)::high risk: user not synced gained GET on `,
        "m",
      ),
    );
    expect(r.code).toBe(1);
  }, 180_000);
});

describe("portier review: a change that does not parse or build still gets its report", () => {
  const broken: [string, string, string, string, RegExp][] = [
    [
      "invalid JSON",
      "data/roles.json",
      '"label": "Élève adulte", "aliases": []',
      '"label": "Élève adulte", "aliases": ["Élève",]',
      /^HEAD \(working tree\): .*data\/roles\.json:\d+:\d+: invalid JSON: unexpected "\]" where a value was expected$/m,
    ],
    [
      "a repeated parameter",
      "data/routes.json",
      `"template": "${GAINED_ROUTE}"`,
      `"template": "${GAINED_ROUTE.replace("{idEleveAdulte}", "{codeOrganisme}")}"`,
      /data\/routes\.json:\d+: routes\[\d+\]\.template: parameter \{codeOrganisme\} appears twice/,
    ],
    [
      "a policy that does not compile",
      "policies/portier/access/roles.rego",
      "\tcount(_granted_roles) > 0\n",
      "\tcount(_granted_roles) > no_such_variable\n",
      /rego_unsafe_var_error: var no_such_variable is unsafe/,
    ],
  ];
  it.each(broken)(
    "%s: md, json, SARIF, JUnit and an annotation at the line, exit 2",
    async (_, file, from, to, message) => {
      const work = makeReviewRepo();
      execFileSync("git", ["-C", work.dir, "checkout", "-q", "-f", work.base]);
      edit(work.dir, file, from, to);
      const out = (ext: string) => join(work.dir, `review.${ext}`);
      const r = await portierProcess(
        ["review", "main", ...["md", "sarif", "xml"].flatMap((e) => ["--output", out(e)]), "--format", "json"],
        { cwd: work.dir, env: { GITHUB_ACTIONS: "true" } },
      );
      expect(r.code).toBe(2);
      const report = JSON.parse(r.stdout) as ReviewReport;
      expect(report.error?.message).toMatch(message);
      const at = report.error?.location;
      expect(at?.file).toBe(file);
      const line = lineOf(work.dir, file, to.trim().split("\n")[0]!.trim());
      expect(at?.line).toBe(file.endsWith(".json") && !_.startsWith("invalid") ? line : at?.line);
      expect(Math.abs((at?.line ?? 0) - line)).toBeLessThanOrEqual(1);
      const { errors, results } = validateSarif(readFileSync(out("sarif"), "utf8"));
      expect(errors).toBe("No errors");
      expect(results).toEqual([expect.objectContaining({ ruleId: "portier/review-error", level: "error" })]);
      expect(where(results[0]!)).toBe(`${file}:${at?.line}`);
      expect(readFileSync(out("md"), "utf8")).toContain(`**The review could not answer at \`${file}:${at?.line}`);
      expect(readFileSync(out("xml"), "utf8")).toMatch(
        /<testcase classname="portier\.review\.error" name="the review could not answer">\n\s+<failure /,
      );
      expect(r.stderr).toMatch(
        new RegExp(
          `^::error file=${file.replace(/[./]/g, "\\$&")},line=${at?.line},(col=\\d+,)?title=Portier%3A the review ` +
            `could not answer::`,
          "m",
        ),
      );
    },
    120_000,
  );
});

describe("portier review: when it cannot answer, exit 2", () => {
  it(
    "names a revision it cannot find, a log not found, " +
      "empty, or not JSON; --allow-other-lines accepts a mixed log",
    async () => {
      const missing = await portierProcess(["review", "--project", repo.dir, "no-such-rev"]);
      expect(missing.stderr).toBe(
        "portier review: BASE no-such-rev: not found: no-such-rev " +
          "(not a bundle file, a policy folder, or a git revision)\n",
      );
      expect(missing.code).toBe(2);

      const bundle = join(repo.dir, "base.tar.gz");
      // The base policy (the project's own), under which the log was recorded.
      expect((await portier(["bundle", "build", "--project", PROJECT_ROOT, "--out", bundle])).code).toBe(0);
      const log = (name: string, text: string) => {
        writeFileSync(join(repo.dir, name), text);
        return join(repo.dir, name);
      };
      const cases: [string, RegExp][] = [
        [join(repo.dir, "absent.log"), /--log .*absent\.log: not found: .*absent\.log$/],
        [log("empty.log", ""), /--log .*empty\.log: no decision read \(0 line\(s\)\)/],
        [
          log("text.log", "Portier listening on 127.0.0.1:8181\nALLOW GET /v1/roles\n"),
          /--log .*text\.log: 2 line\(s\) are not JSON, the first at line 1; pass --allow-other-lines/,
        ],
      ];
      for (const [file, message] of cases) {
        const r = await inRepo(bundle, bundle, "--log", file);
        expect(r.stderr.trim()).toMatch(message);
        expect(r.stdout).toMatch(/^### Portier review: .*\n\n\*\*The review could not answer\.\*\*\n/);
        expect(r.code).toBe(2);
      }
      // A side that does not build: its file, position and reason.
      const broken = scratchProject();
      edit(broken, "data/routes.json", '"allowed": ["eleve_adulte"]', '"allowed": ["eleve_adulte", "surveillant"]');
      const bad = await inRepo(broken, bundle);
      expect(bad.stderr).toMatch(
        /^portier review: BASE .*: .*data\/routes\.json:\d+: routes\[\d+\]\.allowed\[1\]: unknown role "surveillant"/,
      );
      expect(bad.code).toBe(2);

      const mixed = log("mixed.log", `starting\n${readFileSync(join(repo.dir, DECISION_LOG), "utf8")}`);
      const ok = await inRepo(bundle, bundle, "--log", mixed, "--allow-other-lines", "--format", "json");
      const report = JSON.parse(ok.stdout) as ReviewReport;
      expect(report.replay?.logs).toEqual([{ file: mixed, replayed: 5, notReplayable: 0, otherLines: 1 }]);
      expect(report.tests).toBeNull();
      expect(ok.code).toBe(0);
    },
    180_000,
  );

  it("refuses a bad --format, --fail-on, --min-coverage or --output name before building anything", async () => {
    for (const [args, message] of [
      [["--format", "pdf"], /--format must be one of md, json, sarif, junit, got "pdf"/],
      [["--fail-on", "everything"], /--fail-on must be one of new-allows, high-risk, any-change/],
      [["--min-coverage", "101"], /--min-coverage: "101" is not a percentage/],
      [["--output", "report.txt"], /--output report\.txt: name the file \.md, \.json, \.sarif or \.xml/],
      [[], /expected BASE and an optional HEAD, got 0/],
    ] as const) {
      const r = await inRepo(...args, ...(args.length ? ["main"] : []));
      expect(r.stderr).toMatch(message);
      expect(r.code).toBe(2);
    }
  });
});
