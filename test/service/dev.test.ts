/**
 * `portier dev`: starts the issuer and the service on loopback; the printed curl lines work as printed.
 */
import { describe, expect, it } from "vitest";
import { spawn, spawnSync } from "node:child_process";
import { PROJECT_ROOT } from "./helpers.js";
import { PORTIER_BIN } from "../support/portier-bin.js";
import { stopChild } from "../support/stop-child.js";

const hasCurl = spawnSync("curl", ["--version"]).status === 0;

describe("portier dev", () => {
  it.skipIf(!hasCurl)(
    "prints curl lines that get both tokens and decisions",
    async () => {
      const proc = spawn(
        process.execPath,
        [PORTIER_BIN, "dev", "--port", "0", "--issuer-port", "0", "--callback-port", "0"],
        { cwd: PROJECT_ROOT, stdio: ["ignore", "pipe", "pipe"] },
      );
      let out = "";
      proc.stdout.on("data", (d: Buffer) => (out += d.toString()));
      try {
        const end = Date.now() + 30_000;
        while (!out.includes("Ctrl-C to stop.")) {
          if (Date.now() > end || proc.exitCode !== null) throw new Error(`dev did not start:\n${out}`);
          await new Promise((r) => setTimeout(r, 100));
        }
        const script = out
          .split("\n")
          .filter((l) => /^(MACHINE_TOKEN|CODE|USER_TOKEN|curl) ?=?/.test(l))
          .join("\n");
        // The lines name the callback on the port it listens on (--callback-port 0: not the default 8400).
        const listening = out.split("\n").find((l) => l.startsWith('{"msg":"listening"'));
        const callback = `${(JSON.parse(listening!) as { signin: string }).signin}callback`;
        expect(callback).not.toContain(":8400/");
        expect(script).toContain(`redirect_uri=${encodeURIComponent(callback)}&`);
        expect(script).toContain(`--data-urlencode redirect_uri=${callback} `);
        const run = spawnSync("bash", ["-c", script], { encoding: "utf8", timeout: 30_000 });
        const answers = run.stdout
          .split("\n")
          .filter((l) => l.startsWith('{"decision_id"'))
          .map((l) => JSON.parse(l) as { reason: string; flow: string });
        expect(answers.map((a) => `${a.flow}:${a.reason}`)).toEqual([
          "accessCode:allowed",
          "accessCode:role_not_allowed",
          "accessCode:tenant_mismatch",
          "application:allowed",
        ]);
        expect(run.stdout).toContain("HTTP/1.1 200 OK");
        expect(run.stdout.toLowerCase()).toContain("x-portier-roles: enseignant_jeune");
        // The decisions show in dev's own output as readable lines (portier serve keeps JSON).
        const end2 = Date.now() + 5000;
        while (!/^\d\d:\d\d:\d\d DENY  GET \/v2\/ORG002\/centres /m.test(out) && Date.now() < end2)
          await new Promise((r) => setTimeout(r, 50));
        expect(out).toMatch(
          new RegExp(
            String.raw`^\d\d:\d\d:\d\d ALLOW GET \/v2\/ORG001\/elevesJeunes\/42\/absences ` +
              String.raw`{2}\/v2\/\{codeOrganisme\}\/elevesJeunes\/\{idEleveJeune\}\/absences {2}accessCode \S+ ` +
              String.raw`\[enseignant_jeune\] -> allowed: `,
            "m",
          ),
        );
        expect(out).toMatch(/^\d\d:\d\d:\d\d DENY  GET \/v2\/ORG002\/centres .* -> tenant_mismatch: /m);
        expect(out).not.toMatch(/"event":"decision"/);
      } finally {
        // SIGTERM stops the sign-in page, the service and the issuer, and the process exits 0 (never left behind).
        expect(await stopChild(proc)).toBe(0);
      }
    },
    60_000,
  );
});
