/**
 * `portier directory seal FILE [--out FILE]`: appends the NDJSON end record that the service requires, in
 * place or into a copy; refuses a sealed file, a JSON array and a malformed file (exit 2), and a bad command
 * line (exit 2). The sealed file loads; its every prefix does not.
 */
import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadDirectoryFile } from "../../src/directory/index.js";
import { portierInProcess as portier } from "../support/cli.js";
import { sealNdjson } from "../support/directory-files.js";
import { TENANT_A } from "../support/sample.js";

const LINES = [
  JSON.stringify({ sub: "a", tenant_id: TENANT_A, roles: ["enseignant_jeune"] }),
  "",
  JSON.stringify({ sub: "b", tenant_id: TENANT_A, roles: ["Enseignant jeune"] }),
];

function folder(): string {
  return mkdtempSync(join(tmpdir(), "portier-seal-"));
}

describe("portier directory seal", () => {
  it("seals in place: the same bytes as sealNdjson, and the file loads", async () => {
    const file = join(folder(), "users.ndjson");
    writeFileSync(file, `${LINES.join("\n")}\n`);
    const r = await portier(["directory", "seal", file]);
    expect(r).toMatchObject({ code: 0, stderr: "" });
    expect(r.stdout).toMatch(/^directory sealed: .*users\.ndjson \(2 records, sha256 [0-9a-f]{64}\)\n$/);
    expect(readFileSync(file, "utf8")).toBe(sealNdjson(LINES));
    expect((await loadDirectoryFile(file)).entries.size).toBe(2);
  });

  it(
    "adds the missing final newline before the end " + "record; --out writes a sealed copy and leaves the file",
    async () => {
      const dir = folder();
      const file = join(dir, "users.ndjson");
      writeFileSync(file, LINES.join("\n"));
      const out = join(dir, "sealed.ndjson");
      expect((await portier(["directory", "seal", file, "--out", out])).code).toBe(0);
      expect(readFileSync(file, "utf8")).toBe(LINES.join("\n"));
      expect(readFileSync(out, "utf8")).toBe(sealNdjson(LINES));
    },
  );

  it("an empty file seals to an empty (but complete) directory", async () => {
    const file = join(folder(), "empty.ndjson");
    writeFileSync(file, "");
    expect((await portier(["directory", "seal", file])).code).toBe(0);
    expect(readFileSync(file, "utf8")).toBe(sealNdjson([]));
  });

  const REFUSED: [string, string, RegExp][] = [
    [
      "an already sealed file",
      sealNdjson(LINES),
      /^portier: .*users\.ndjson:4: already sealed \(it ends with an end record\)$/m,
    ],
    [
      "a JSON array",
      JSON.stringify([{ sub: "a", tenant_id: TENANT_A, roles: [] }]),
      /a JSON array directory is complete by its own syntax and takes no end record/,
    ],
    ["a malformed line", `${LINES[0]}\n{oops\n`, /users\.ndjson:2:2: /],
  ];
  for (const [name, text, message] of REFUSED) {
    it(`refuses ${name} (exit 2) and leaves it as it was`, async () => {
      const file = join(folder(), "users.ndjson");
      writeFileSync(file, text);
      const r = await portier(["directory", "seal", file]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(readFileSync(file, "utf8")).toBe(text);
    });
  }

  it('a missing file is exit 2 and "not found: PATH"; a bad command line exit 2; --help exit 0', async () => {
    const missing = join(folder(), "none.ndjson");
    expect(await portier(["directory", "seal", missing])).toMatchObject({
      code: 2,
      stderr: `portier: not found: ${missing}\n`,
    });
    expect((await portier(["directory", "sign", "x"])).code).toBe(2);
    expect((await portier(["directory", "seal"])).code).toBe(2);
    const help = await portier(["directory", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("usage: portier directory [options] seal FILE");
  });
});
