import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadPolicySource } from "../../src/review/index.js";
import { scratchProject } from "../support/cli.js";

describe("loadPolicySource with a git revision", () => {
  it("names the revision, not the temporary folder it was exported to, when its policy does not build", async () => {
    const repo = scratchProject();
    const file = join(repo, "data", "routes.json");
    writeFileSync(file, readFileSync(file, "utf8").replace('"eleve_adulte"]', '"eleve_adulte", "surveillant"]'));
    const git = (...args: string[]) => execFileSync("git", ["-C", repo, ...args], { stdio: "ignore" });
    git("init", "-q");
    git("add", "-A");
    git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "broken data");
    const err = await loadPolicySource("HEAD", { repo }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(/^git revision HEAD: /);
    expect(err?.message).toMatch(/HEAD:\/?data\/routes\.json: routes\[\d+\]\.allowed\[\d+\]: unknown role "surveillant"/);
    expect(err?.message).not.toMatch(/portier-rev-/);
  });
});
