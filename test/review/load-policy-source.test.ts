/**
 * loadPolicySource on a git revision whose policies do not build: the error names the revision and the file
 * inside it, never the temporary folder the revision was exported to.
 */
import { describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadPolicySource } from "../../src/review/index.js";
import { scratchProject } from "../support/cli.js";

describe("loadPolicySource: a git revision", () => {
  it("a revision with broken data names the revision and the file, not a temp folder", async () => {
    const repo = scratchProject();
    const file = join(repo, "data", "routes.json");
    writeFileSync(file, readFileSync(file, "utf8").replace('"eleve_adulte"]', '"eleve_adulte", "surveillant"]'));
    const git = (...args: string[]) =>
      execFileSync("git", ["-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.org", ...args], {
        stdio: "ignore",
      });
    git("init", "-q");
    git("add", "-A");
    git("commit", "-qm", "broken routes");
    const err = await loadPolicySource("HEAD", { repo }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(
      /^git revision HEAD:data\/routes\.json:\d+: routes\[\d+\]\.allowed\[\d+\]: unknown role "surveillant"/,
    );
    expect(err?.message).not.toContain(tmpdir());
  }, 60_000);
});
