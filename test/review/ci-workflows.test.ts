/**
 * The shipped CI workflows (docs/ci/github-actions.yml, docs/ci/gitlab-ci.yml) run as their runner would run
 * them: the YAML parsed, each `run:` step (GitHub) or the job's before_script and script (GitLab) executed by bash
 * in order, in a real git repository whose pull request makes a role gain a route (test/support/review-repo.ts).
 * What reaches outside is replaced on PATH by a recording stand-in: npm (the install), gh and curl (posting the
 * comment); `portier` is the built CLI. Checked: the comment posted is the report, the files for code scanning and
 * JUnit are written, annotations are printed, and the job fails because the change gains a grant.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import YAML from "yaml";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { opaPath } from "../../src/toolchain/opa.js";
import { PORTIER_BIN } from "../support/portier-bin.js";
import { makeReviewRepo, type ReviewRepo } from "../support/review-repo.js";

interface GithubStep {
  name?: string;
  id?: string;
  uses?: string;
  run?: string;
  env?: Record<string, string>;
}

interface StepRun {
  code: number;
  stdout: string;
  stderr: string;
}

let repo: ReviewRepo;
let stubs: string;
let calls: string;

/** Recording stand-ins for what a workflow reaches outside with, and `portier` itself. */
function writeStubs(): void {
  stubs = mkdtempSync(join(tmpdir(), "portier-ci-stubs-"));
  calls = join(stubs, "calls.log");
  const stub = (name: string, body: string) => {
    writeFileSync(join(stubs, name), `#!/bin/bash\necho "${name} $*" >> "${calls}"\n${body}\n`);
    chmodSync(join(stubs, name), 0o755);
  };
  stub("npm", "exit 0");
  stub("portier", `exec "${process.execPath}" "${PORTIER_BIN}" "$@"`);
  // gh pr comment --edit-last fails when there is no comment yet, as the real one does; the body is kept.
  stub(
    "gh",
    [
      'prev=""; for a in "$@"; do if [ "$prev" = "--body-file" ]; then cp "$a" "' +
        stubs +
        '/comment.md"; fi; prev=$a; done',
      'for a in "$@"; do if [ "$a" = "--edit-last" ]; then echo "no comments found" >&2; exit 1; fi; done',
    ].join("\n"),
  );
  stub("curl", 'for a in "$@"; do case "$a" in body@*) cp "${a#body@}" "' + stubs + '/note.md";; esac; done');
}

function bash(script: string, env: Record<string, string>): StepRun {
  const r = spawnSync("bash", ["--noprofile", "--norc", "-e", "-c", script], {
    cwd: repo.dir,
    encoding: "utf8",
    timeout: 170_000,
    env: { ...process.env, PATH: `${stubs}:${dirname(opaPath())}:${process.env.PATH ?? ""}`, ...env },
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** `${{ expr }}` replaced from `values`; an expression the test does not know fails the test. */
function expand(text: string, values: Record<string, string>): string {
  return text.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_, expr: string) => {
    const value = values[expr];
    if (value === undefined) throw new Error(`the workflow uses \${{ ${expr} }}, which this test does not provide`);
    return value;
  });
}

beforeAll(() => {
  repo = makeReviewRepo();
  // The pull request: a role gains a route, and the recorded log (review-logs/) has a call it opens.
  spawnSync("git", ["-C", repo.dir, "checkout", "-q", repo.roleGain]);
  writeStubs();
});

/** The GitHub workflow's `run:` steps in order, as the runner runs them; each step's result, and the outputs file. */
function runGithubWorkflow(): {
  workflow: { jobs: { review: { steps: GithubStep[] } } };
  ran: Record<string, StepRun>;
  output: string;
} {
  const workflow = YAML.parse(readFileSync(join(PROJECT_ROOT, "docs/ci/github-actions.yml"), "utf8")) as {
    on: { pull_request: unknown };
    jobs: { review: { steps: GithubStep[] } };
  };
  expect(workflow.on.pull_request).toBeDefined();
  const output = join(stubs, "github-output");
  writeFileSync(output, "");
  const values: Record<string, string> = {
    "github.event.pull_request.base.sha": repo.base,
    "github.event.pull_request.number": "7",
    "secrets.GITHUB_TOKEN": "test-token",
  };
  const ran: Record<string, StepRun> = {};
  for (const step of workflow.jobs.review.steps) {
    if (!step.run) continue;
    // A step's outputs are known once it has run.
    for (const line of readFileSync(output, "utf8").split("\n")) {
      const [key, ...rest] = line.split("=");
      if (key && rest.length) values["steps.review.outputs." + key] = rest.join("=");
    }
    const env = Object.fromEntries(Object.entries(step.env ?? {}).map(([k, v]) => [k, expand(String(v), values)]));
    ran[step.name ?? step.id ?? "?"] = bash(expand(step.run, values), {
      ...env,
      GITHUB_ACTIONS: "true",
      GITHUB_OUTPUT: output,
    });
  }
  return { workflow, ran, output };
}

describe("docs/ci/github-actions.yml", () => {
  it("runs its steps on a pull request: comment posted, SARIF and JUnit written, annotations, the check fails", () => {
    const { workflow, ran, output } = runGithubWorkflow();
    expect(Object.keys(ran)).toEqual([
      "Install Portier",
      "Review the policy change",
      "Post the report on the pull request",
      "Fail the check on a finding",
    ]);
    expect(ran["Install Portier"]?.code).toBe(0);
    const review = ran["Review the policy change"];
    expect(review?.code).toBe(0); // the step records the code; the last step fails the check
    expect(readFileSync(output, "utf8")).toBe("code=1\n");
    expect(review?.stderr).toMatch(/^::warning file=data\/routes\.json,line=\d+,title=Portier%3A grant gained::/m);

    const comment = readFileSync(join(stubs, "comment.md"), "utf8");
    expect(comment).toBe(readFileSync(join(repo.dir, "build/review.md"), "utf8"));
    expect(comment.split("\n")[2]).toBe("**1 grant gained, 0 lost; 1 recorded call would now be allowed, 0 denied**");
    const log = readFileSync(calls, "utf8");
    expect(log).toContain("npm ci --no-audit --no-fund\n");
    expect(log).toContain("gh pr comment 7 --body-file build/review.md --edit-last\n");
    expect(log).toContain("gh pr comment 7 --body-file build/review.md\n");
    expect(log).toMatch(new RegExp(`^portier review ${repo.base} --log review-logs/decisions.log `, "m"));

    const sarif = JSON.parse(readFileSync(join(repo.dir, "build/review.sarif"), "utf8")) as { version: string };
    expect(sarif.version).toBe("2.1.0");
    expect(readFileSync(join(repo.dir, "build/review.xml"), "utf8")).toMatch(/<testsuites [^>]*failures="2"/);
    expect(ran["Fail the check on a finding"]?.code).toBe(1);
    const uploads = workflow.jobs.review.steps.filter((s) => s.uses?.startsWith("github/codeql-action/upload-sarif"));
    expect(uploads).toHaveLength(1);
  }, 180_000);
});

describe("docs/ci/github-actions.yml on a change that does not parse", () => {
  it("still posts the report, annotates the line and column, uploads the SARIF error, and fails the check", () => {
    const routes = join(repo.dir, "data/routes.json");
    const before = readFileSync(routes, "utf8");
    writeFileSync(
      routes,
      before.replace('"allowed": ["eleve_adulte", "enseignant_adulte"]', '"allowed": ["eleve_adulte",]'),
    );
    const line =
      before.split("\n").findIndex((l) => l.includes('"allowed": ["eleve_adulte", "enseignant_adulte"]')) + 1;
    try {
      const { ran, output } = runGithubWorkflow();
      expect(readFileSync(output, "utf8")).toBe("code=2\n");
      expect(ran["Review the policy change"]?.stderr).toMatch(
        new RegExp(
          `^::error file=data/routes\\.json,line=${line},col=\\d+,title=Portier%3A the review could not answer::`,
          "m",
        ),
      );
      const comment = readFileSync(join(stubs, "comment.md"), "utf8");
      expect(comment).toBe(readFileSync(join(repo.dir, "build/review.md"), "utf8"));
      expect(comment).toContain(`**The review could not answer at \`data/routes.json:${line}:`);
      const sarif = JSON.parse(readFileSync(join(repo.dir, "build/review.sarif"), "utf8")) as {
        runs: { results: { ruleId: string; level: string }[] }[];
      };
      expect(sarif.runs[0]?.results).toEqual([
        expect.objectContaining({ ruleId: "portier/review-error", level: "error" }),
      ]);
      expect(ran["Fail the check on a finding"]?.code).toBe(2);
    } finally {
      writeFileSync(routes, before);
    }
  }, 180_000);
});

describe("docs/ci/gitlab-ci.yml", () => {
  it("runs its job on a merge request: note posted, JUnit report written, the job fails", () => {
    const ci = YAML.parse(readFileSync(join(PROJECT_ROOT, "docs/ci/gitlab-ci.yml"), "utf8")) as Record<
      string,
      { before_script: string[]; script: string[]; artifacts: { reports: { junit: string } } }
    >;
    const job = ci["portier-review"];
    if (!job) throw new Error("no portier-review job");
    mkdirSync(join(repo.dir, "build"), { recursive: true });
    spawnSync("rm", ["-f", join(repo.dir, "build/review.md"), join(repo.dir, "build/review.xml")]);
    // GitLab runs before_script and script in one shell, stopping at the first failing line.
    const r = bash(["set -o pipefail", ...job.before_script, ...job.script].join("\n"), {
      GITLAB_CI: "true",
      CI_MERGE_REQUEST_DIFF_BASE_SHA: repo.base,
      CI_API_V4_URL: "https://gitlab.example/api/v4",
      CI_PROJECT_ID: "42",
      CI_MERGE_REQUEST_IID: "7",
      PORTIER_REVIEW_TOKEN: "test-token",
    });
    expect(r.stderr).not.toMatch(/^::/m);
    expect(r.code).toBe(1);
    const note = readFileSync(join(stubs, "note.md"), "utf8");
    expect(note).toBe(readFileSync(join(repo.dir, "build/review.md"), "utf8"));
    expect(note.split("\n")[2]).toBe("**1 grant gained, 0 lost; 1 recorded call would now be allowed, 0 denied**");
    expect(readFileSync(calls, "utf8")).toContain(
      "curl --fail --silent --show-error --request POST --header PRIVATE-TOKEN: test-token --data-urlencode " +
        "body@build/review.md https://gitlab.example/api/v4/projects/42/merge_requests/7/notes\n",
    );
    expect(existsSync(join(repo.dir, job.artifacts.reports.junit))).toBe(true);
  }, 180_000);
});
