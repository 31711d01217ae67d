/**
 * The shipped systemd unit (docs/deploy/portier.service) passes `systemd-analyze verify` where that tool is
 * installed (only the node path is replaced by this machine's), and a broken copy fails, so the check is real.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";

const UNIT = join(PROJECT_ROOT, "docs", "deploy", "portier.service");
const analyze = spawnSync("systemd-analyze", ["--version"]).status === 0;
if (!analyze) console.warn("deploy-files: systemd-analyze is not installed: the unit check is skipped");

function verify(text: string): { code: number | null; output: string } {
  const file = join(mkdtempSync(join(tmpdir(), "portier-unit-")), "portier.service");
  writeFileSync(file, text);
  const r = spawnSync("systemd-analyze", ["verify", file], { encoding: "utf8" });
  return { code: r.status, output: `${r.stdout}${r.stderr}` };
}

describe("docs/deploy/portier.service", () => {
  const unit = readFileSync(UNIT, "utf8");

  it("runs portier serve with its config file and stops it with SIGTERM", () => {
    expect(unit).toMatch(/^ExecStart=\/usr\/bin\/node \/opt\/portier\/dist\/cli\/main\.js serve$/m);
    expect(unit).toMatch(/^Environment=PORTIER_CONFIG=\/etc\/portier\/portier\.json$/m);
    expect(unit).toMatch(/^KillSignal=SIGTERM$/m);
  });

  it.skipIf(!analyze)("passes systemd-analyze verify, and a broken copy does not", () => {
    const node = execFileSync("sh", ["-c", "command -v node"], { encoding: "utf8" }).trim() || process.execPath;
    const ok = verify(unit.replace("/usr/bin/node", node));
    expect(ok.output).toBe("");
    expect(ok.code).toBe(0);
    const broken = verify(unit.replace("/usr/bin/node", "/nonexistent/node"));
    expect(broken.code).not.toBe(0);
  });
});
