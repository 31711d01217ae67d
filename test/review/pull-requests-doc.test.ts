/**
 * docs/review/pull-requests.md shows a real `portier review` report: its example's ```text block must be what the
 * command prints today in the repository test/support/review-example.ts makes (regenerate with
 * `npx tsx tools/write-review-example.ts`), and the workflows it points to must exist.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { EXAMPLE_PAGE, pageExample, runExample } from "../support/review-example.js";

describe("docs/review/pull-requests.md", () => {
  it("shows the report portier review prints for its example, exactly", async () => {
    const shown = pageExample();
    expect(shown, "the example's command and text blocks").toBeDefined();
    const { output, code } = await runExample();
    expect(code).toBe(1); // a grant gained: the default --fail-on new-allows fails
    expect(shown).toBe(output);
  }, 180_000);

  it("links the CI workflows that exist", () => {
    const page = readFileSync(EXAMPLE_PAGE, "utf8");
    for (const file of ["docs/ci/github-actions.yml", "docs/ci/gitlab-ci.yml"]) {
      expect(page).toContain(`../ci/${file.split("/").pop()}`);
      expect(existsSync(join(PROJECT_ROOT, file))).toBe(true);
    }
  });
});
