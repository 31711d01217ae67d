/**
 * The streaming directory loader: records and multi-byte characters split across chunk boundaries, malformed
 * JSON reported with its position, bounds on file size / record count / record length, shared tenant ids
 * and role name lists, and the event loop getting turns while a file loads.
 */
import { describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  DirectoryLoadError,
  entryRoles,
  loadDirectoryFile,
  loadRoleResolver,
  parseDirectory,
  type DirectoryEntry,
} from "../../src/directory/index.js";
import { TENANT_A } from "../support/sample.js";
import { sealNdjson } from "../support/directory-files.js";

const ROLES = fileURLToPath(new URL("../../data/roles.json", import.meta.url));
const rolesOf = entryRoles(loadRoleResolver(ROLES));
/** An entry as a decision sees it under data/roles.json's names. */
const resolved = (e: DirectoryEntry | undefined) => e && { tenant_id: e.tenant_id, roles: rolesOf(e) };
const T = TENANT_A;
const U = "9a1b2c3d-0000-4000-8000-000000000002";
const folder = mkdtempSync(join(tmpdir(), "portier-load-"));
let files = 0;
function file(text: string | Buffer, ext = "json"): string {
  const path = join(folder, `f${files++}.${ext}`);
  writeFileSync(path, text);
  return path;
}

const RECORDS = [
  { sub: "a", tenant_id: T, roles: ["enseignant_jeune"] },
  { sub: "élève-Ω-😀", tenant_id: "tenant-é", roles: ["Parent de l'élève jeune", "ÉLÈVE ADULTE"] },
  { sub: 'quote"and\\backslash,]}', tenant_id: U, roles: [] },
  { sub: "b", tenant_id: T, roles: ["enseignant_jeune"] },
];
const EXPECTED: [string, { tenant_id: string; roles: string[] }][] = [
  ["a", { tenant_id: T, roles: ["enseignant_jeune"] }],
  ["élève-Ω-😀", { tenant_id: "tenant-é", roles: ["parent_eleve_jeune", "eleve_adulte"] }],
  ['quote"and\\backslash,]}', { tenant_id: U, roles: [] }],
  ["b", { tenant_id: T, roles: ["enseignant_jeune"] }],
];
const FORMATS: [string, string][] = [
  ["JSON array, compact", JSON.stringify(RECORDS)],
  ["JSON array, indented, with a byte-order mark", "\ufeff" + JSON.stringify(RECORDS, null, 2)],
  ["NDJSON, CRLF and blank lines", sealNdjson(RECORDS.flatMap((r) => [`${JSON.stringify(r)}\r`, "\r"]))],
];

describe("loadDirectoryFile streams the file in chunks", () => {
  for (const [format, text] of FORMATS) {
    for (const chunkBytes of [1, 2, 3, 5, 7, 64, 65536]) {
      it(`${format}, ${chunkBytes}-byte chunks`, async () => {
        const idx = await loadDirectoryFile(file(text), { chunkBytes });
        expect(idx.problems).toEqual([]);
        expect(idx.entries.size).toBe(EXPECTED.length);
        for (const [sub, entry] of EXPECTED) expect(resolved(idx.entries.get(sub))).toEqual(entry);
        expect(idx.entries.get("c")).toBeUndefined();
        expect(idx.entries.get("élève")).toBeUndefined();
      });
    }
  }

  it("gives the same index as parsing the whole text", async () => {
    const text = JSON.stringify([...RECORDS, { sub: "x", tenant_id: T, roles: [""] }, 7]);
    const whole = parseDirectory(text, "d.json");
    const streamed = await loadDirectoryFile(file(text), { chunkBytes: 3 });
    expect(streamed.entries.size).toBe(whole.entries.size);
    for (const [sub] of EXPECTED) expect(streamed.entries.get(sub)).toEqual(whole.entries.get(sub));
    expect(streamed.rejected).toBe(2);
    expect(streamed.problems.map((p) => p.replace(/^\S+ /, ""))).toEqual([
      "record 4: roles[0] must be a role name (a non-blank string)",
      "record 5: must be an object",
    ]);
  });

  it("gives the event loop turns while it loads: a timer never waits long", async () => {
    const lines: string[] = [];
    for (let i = 0; i < 100_000; i++)
      lines.push(JSON.stringify({ sub: `user-${i}`, tenant_id: T, roles: ["enseignant_jeune"] }));
    const path = file(sealNdjson(lines), "ndjson");
    // Measured in this process's CPU time, not wall time: on a loaded machine the process itself may wait for a
    // core, which says nothing about how long the loader keeps the event loop.
    const cpuMs = (): number => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    };
    const gaps: number[] = [];
    let last = cpuMs();
    let done = false;
    const tick = () => {
      const now = cpuMs();
      gaps.push(now - last);
      last = now;
      if (!done) setTimeout(tick, 0);
    };
    setTimeout(tick, 0);
    const started = cpuMs();
    const idx = await loadDirectoryFile(path, { chunkBytes: 4096 });
    const took = cpuMs() - started;
    done = true;
    expect(idx.entries.size).toBe(100_000);
    // Slices of about 5 ms: the timer runs many times during the load, and far more often than the load's length.
    expect(gaps.length).toBeGreaterThan(10);
    expect(Math.max(...gaps)).toBeLessThan(Math.max(150, took / 4));
  });
});

describe("malformed files are refused with the file, line and column", () => {
  const CASES: [string, string, RegExp][] = [
    [
      "an element with a bad property name",
      '[{"sub":"a","tenant_id":"t","roles":[]},\n  {oops}]',
      /^F:2:4: record 1: Expected property name or '}'$/,
    ],
    [
      "a bad value on the fourth line of an element",
      '[\n{"sub":"a",\n"tenant_id":"t",\n"roles":[1 2]}]',
      /^F:4:12: record 0: Expected ',' or ']' after array element$/,
    ],
    // JSON.parse names no position for an unexpected token: the scan of the record finds it.
    ["an unexpected token", '[\n {"sub":"a",\n"roles":[,]}]', /^F:3:10: record 0: Unexpected token ','/],
    ["a misspelt literal in an NDJSON line", '{"sub":"a","tenant_id":"t","roles":[],"x":tru}', /^F:1:46: /],
    ["a bad escape in the second element", '[{"sub":"a"},\n  {"sub":"b\\q"}]', /^F:2:13: record 1: Bad escaped/],
    ["a control character on an element's second line", '[{"sub":"a",\n"tenant_id":"t\u0001"}]', /^F:2:15: record 0: /],
    ["a truncated NDJSON line", '{"sub":"a","tenant_id":"t","roles":[]}\n{"sub":"b","ten', /^F:2:16: /],
    [
      "a truncated array",
      '[{"sub":"a","tenant_id":"t","roles":[]}',
      /^F:1:40: unexpected end of file: the JSON array is not closed$/,
    ],
    ["a trailing comma", "[1,\n]", /^F:2:1: a value is expected after ','$/],
    ["a leading comma", "[ ,1]", /^F:1:3: a value is expected before ','$/],
    ["content after the array", "[1]\n\n x", /^F:3:2: unexpected content after the JSON array$/],
    ["a stray closing brace", "[1}]", /^F:1:3: unexpected '}'$/],
    [
      "a bad NDJSON line",
      '{"sub":"a","tenant_id":"t","roles":[]}\n\n  {"a" 1}',
      /^F:3:8: Expected ':' after property name$/,
    ],
    [
      "an NDJSON record after the end record",
      sealNdjson(['{"sub":"a","tenant_id":"t","roles":[]}']) + '{"sub":"b","tenant_id":"t","roles":[]}\n',
      /^F:3: content after the end record of line 2 \(nothing may follow it\)$/,
    ],
    [
      "a malformed end record",
      '{"sub":"a","tenant_id":"t","roles":[]}\n{"portier_end":{"records":1}}\n',
      /^F:2: the end record's sha256 must be/,
    ],
  ];
  for (const [name, text, message] of CASES) {
    it(name, async () => {
      const path = file(text);
      const err = await loadDirectoryFile(path, { chunkBytes: 5 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DirectoryLoadError);
      expect((err as Error).message.replace(path, "F")).toMatch(message);
      expect(() => parseDirectory(text, "F")).toThrow(message);
    });
  }

  it("invalid UTF-8 names the bytes", async () => {
    const path = file(
      Buffer.concat([
        Buffer.from('[{"sub":"a'),
        Buffer.from([0xc3, 0x28]),
        Buffer.from('","tenant_id":"t","roles":[]}]'),
      ]),
    );
    await expect(loadDirectoryFile(path, { chunkBytes: 8 })).rejects.toThrow(/not valid UTF-8 \(within bytes 8-16\)/);
  });
});

describe("bounds", () => {
  const record = JSON.stringify({ sub: "a".repeat(100), tenant_id: T, roles: [] }); // 154 characters
  const longer = record.replace("}", `,"pad":"${"p".repeat(50)}"}`);
  const CASES: [string, string, object, RegExp][] = [
    [
      "an NDJSON line over the length limit",
      `${record}\n${longer}\n`,
      { maxRecordChars: 200 },
      /:2: line longer than 200 characters/,
    ],
    [
      "an NDJSON file without newlines",
      `${record}${" ".repeat(400)}`,
      { maxRecordChars: 200 },
      /:1: line longer than 200 characters/,
    ],
    [
      "a JSON array element over the length limit",
      `[${record},\n ${longer}]`,
      { maxRecordChars: 200 },
      /:2:2: record 1 is longer than 200 characters/,
    ],
    [
      "an unfinished JSON array element over the length limit",
      `[${record},\n ${longer}`,
      { maxRecordChars: 200 },
      /:2:2: record 1 is longer than 200 characters/,
    ],
    ["more records than allowed", `[${record},${record},${record}]`, { maxRecords: 2 }, /more than 2 records/],
    ["a file over the size limit", `[${record}]`, { maxFileBytes: 100 }, /larger than 100 bytes/],
  ];
  for (const [name, text, limits, message] of CASES) {
    it(name, async () => {
      await expect(loadDirectoryFile(file(text), { chunkBytes: 16, limits })).rejects.toThrow(message);
    });
  }

  it("accepts a file within every limit", async () => {
    const idx = await loadDirectoryFile(file(`[${record},${record}]`), {
      limits: { maxRecordChars: record.length, maxRecords: 2, maxFileBytes: 2 * record.length + 3 },
    });
    expect(idx.entries.size).toBe(1);
  });
});

describe("records share tenant ids and role name lists", () => {
  const idx = parseDirectory(
    JSON.stringify([
      { sub: "a", tenant_id: T, roles: ["enseignant_jeune", "directeur_jeune"] },
      { sub: "b", tenant_id: T, roles: ["Enseignant jeune", "directeur_jeune"] },
      { sub: "c", tenant_id: U, roles: ["enseignant_jeune", "directeur_jeune"] },
      { sub: "d", tenant_id: U, roles: ["directeur_jeune", "enseignant_jeune"] },
      { sub: "e", tenant_id: T, roles: ["enseignant_jeune", "directeur_jeune"] },
    ]),
    "d.json",
  );

  it("one entry per tenant and role name list as written, one frozen name array per list", () => {
    const [a, b, c, d, e] = ["a", "b", "c", "d", "e"].map((s) => idx.entries.get(s));
    expect(e).toBe(a);
    expect(b).not.toBe(a);
    expect(c).not.toBe(a);
    expect(c?.names).toBe(a?.names);
    expect(d?.names).toEqual(["directeur_jeune", "enseignant_jeune"]);
    expect(Object.isFrozen(a)).toBe(true);
    expect(Object.isFrozen(a?.names)).toBe(true);
    // Names resolve per bundle: a label and an id of the same role give the same ids.
    expect(rolesOf(b as DirectoryEntry)).toEqual(rolesOf(a as DirectoryEntry));
  });
});

describe("subs", () => {
  it("a later record for the same sub replaces the earlier one", () => {
    const idx = parseDirectory(
      sealNdjson([
        '{"sub":"a","tenant_id":"t1","roles":[]}',
        '{"sub":"b","tenant_id":"t1","roles":[]}',
        '{"sub":"a","tenant_id":"t2","roles":[]}',
      ]),
      "d",
    );
    expect(idx.entries.size).toBe(2);
    expect(idx.entries.get("a")?.tenant_id).toBe("t2");
  });

  it("a sub with an unpaired surrogate is refused, and never matches the replacement character", () => {
    const idx = parseDirectory(
      sealNdjson(['{"sub":"x\\ud800","tenant_id":"t","roles":[]}', '{"sub":"y\uFFFD","tenant_id":"t","roles":[]}']),
      "d",
    );
    expect(idx.problems).toEqual(["d line 1: sub must be well-formed Unicode (it has an unpaired surrogate)"]);
    expect(idx.entries.get("x\ud800")).toBeUndefined();
    expect(idx.entries.get("y\ud800")).toBeUndefined();
    expect(idx.entries.get("y\uFFFD")).toBeDefined();
  });

  it("many subs, including ones that share hash-table slots, are all found", () => {
    const lines: string[] = [];
    for (let i = 0; i < 5000; i++) lines.push(JSON.stringify({ sub: `s${i}`, tenant_id: `t${i % 7}`, roles: [] }));
    const idx = parseDirectory(sealNdjson(lines), "d");
    expect(idx.entries.size).toBe(5000);
    for (let i = 0; i < 5000; i++) expect(idx.entries.get(`s${i}`)?.tenant_id).toBe(`t${i % 7}`);
    expect(idx.entries.get("s5000")).toBeUndefined();
  });
});
