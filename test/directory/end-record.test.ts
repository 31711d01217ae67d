/**
 * Issue 17 item 2: no prefix of a feed is ever served. An NDJSON directory is complete only with its end
 * record (count and SHA-256 of the bytes before it), so every proper prefix of a sealed file is refused, as
 * is a file whose count or digest does not match or with anything after the end record; a JSON array is
 * complete by its own syntax, so every proper prefix of one is refused too.
 */
import { describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DirectoryLoadError, TailDigest, loadDirectoryFile, parseDirectory } from "../../src/directory/index.js";
import { TENANT_A } from "../support/sample.js";
import { sealNdjson } from "../support/directory-files.js";

const folder = mkdtempSync(join(tmpdir(), "portier-end-"));
let files = 0;
function file(text: string | Buffer): string {
  const path = join(folder, `f${files++}.ndjson`);
  writeFileSync(path, text);
  return path;
}

const LINES = [
  { sub: "a", tenant_id: TENANT_A, roles: ["enseignant_jeune"] },
  { sub: "élève-😀", tenant_id: TENANT_A, roles: ["Parent de l'élève jeune"] },
  { sub: "c", tenant_id: TENANT_A, roles: [] },
].map((r) => JSON.stringify(r));
const SEALED = sealNdjson(LINES);
const BYTES = Buffer.from(SEALED);

/** Loads a text through both paths (whole text and streamed file in small chunks); the error, or the size. */
async function load(text: Buffer, chunkBytes = 7): Promise<number | Error> {
  const viaFile = await loadDirectoryFile(file(text), { chunkBytes }).then(
    (i) => i.entries.size,
    (e: unknown) => e as Error,
  );
  let viaText: number | Error;
  try {
    viaText = parseDirectory(text.toString("utf8"), "t").entries.size;
  } catch (err) {
    viaText = err as Error;
  }
  expect(typeof viaFile).toBe(typeof viaText);
  return viaFile;
}

describe("NDJSON end record", () => {
  it("the sealed file loads, with its blank lines and a trailing blank tail, in chunks of any size", async () => {
    for (const chunkBytes of [1, 2, 3, 5, 64, 65536]) {
      expect(await load(BYTES, chunkBytes)).toBe(3);
      expect(await load(Buffer.from(`${SEALED}\n  \r\n\t`), chunkBytes)).toBe(3);
    }
    const blanks = sealNdjson(["", LINES[0] as string, "   ", LINES[1] as string, ""]);
    expect(await load(Buffer.from(blanks), 3)).toBe(2);
  });

  it(
    "every proper prefix of the sealed file is refused (but the one without the final newline: all bytes that " +
      "count are there)",
    async () => {
      expect(await load(BYTES.subarray(0, BYTES.length - 1))).toBe(3);
      for (let n = 0; n < BYTES.length - 1; n++) {
        // A cut inside a multi-byte character is refused as invalid UTF-8; every other cut for want of a valid end
        // record.
        const result = await load(BYTES.subarray(0, n), 1 + (n % 5));
        expect(result, `prefix of ${n} bytes`).toBeInstanceOf(DirectoryLoadError);
      }
    },
  );

  it("a prefix whose cut falls at a line end names the missing end record", async () => {
    const cut = SEALED.indexOf("\n", SEALED.indexOf("\n") + 1) + 1;
    const result = await load(Buffer.from(SEALED.slice(0, cut)));
    expect((result as Error).message).toMatch(
      new RegExp(
        String.raw`: the NDJSON directory has no end record \(a feed still being written\?\); ` +
          String.raw`a feed writes it last \(\x60portier directory seal FILE\x60 appends it\)$`,
      ),
    );
  });

  const BAD: [string, string, RegExp][] = [
    [
      "a record removed after sealing",
      SEALED.replace(`${LINES[1]}\n`, ""),
      /:3: the end record counts 3 records but 2 come before it/,
    ],
    [
      "a record edited after sealing (same count)",
      SEALED.replace('"c"', '"d"'),
      /:4: the end record's sha256 does not match the bytes before it/,
    ],
    ["a record added after the end record", `${SEALED}${LINES[0]}\n`, /:5: content after the end record of line 4/],
    ["two end records", `${SEALED}${SEALED.split("\n")[3]}\n`, /:5: content after the end record of line 4/],
    [
      "an end record with a count that is not a number",
      SEALED.replace('"records":3', '"records":"3"'),
      /the end record's records must be/,
    ],
    [
      "an end record with an upper-case digest",
      SEALED.replace(/"sha256":"([0-9a-f]+)"/, (_m, h: string) => `"sha256":"${h.toUpperCase()}"`),
      /the end record's sha256 must be/,
    ],
    [
      "an end record with an unknown field",
      SEALED.replace('{"records"', '{"extra":1,"records"'),
      /unknown field "extra"/,
    ],
  ];
  for (const [name, text, message] of BAD) {
    it(`refuses ${name}`, async () => {
      const result = await load(Buffer.from(text));
      expect(result).toBeInstanceOf(DirectoryLoadError);
      expect((result as Error).message).toMatch(message);
    });
  }

  it("a record whose sub is portier_end is a record, not an end record", async () => {
    expect(
      await load(Buffer.from(sealNdjson([JSON.stringify({ sub: "portier_end", tenant_id: TENANT_A, roles: [] })]))),
    ).toBe(1);
  });

  it("TailDigest: the digest of the bytes before the last non-blank line, however the bytes are cut", () => {
    const text = Buffer.from("x\n\n  y\r\n \n  last line  \n\n \t");
    const expected = createHash("sha256")
      .update(text.subarray(0, text.indexOf("last")))
      .digest("hex");
    for (let chunk = 1; chunk <= text.length; chunk++) {
      const d = new TailDigest();
      for (let i = 0; i < text.length; i += chunk) d.update(text.subarray(i, i + chunk));
      expect(d.beforeLastLine(), `chunks of ${chunk}`).toBe(expected);
    }
    const blank = new TailDigest();
    blank.update(Buffer.from(" \n\n"));
    expect(blank.beforeLastLine()).toBeUndefined();
  });
});

describe("JSON array directory", () => {
  it("every proper prefix is refused; the whole array loads, and nothing may follow it", async () => {
    const text = Buffer.from(
      `${JSON.stringify(
        LINES.map((l) => JSON.parse(l) as unknown),
        null,
        1,
      )}\n`,
    );
    expect(await load(text)).toBe(3);
    for (let n = 0; n < text.length; n++) {
      // Only blank bytes may follow the closing bracket: a prefix that ends after it is the whole array.
      if (text.subarray(n).toString().trim() === "") continue;
      expect(await load(text.subarray(0, n), 1 + (n % 5)), `prefix of ${n} bytes`).toBeInstanceOf(DirectoryLoadError);
    }
    expect(await load(Buffer.concat([text, Buffer.from("[]")]))).toBeInstanceOf(DirectoryLoadError);
  });
});
