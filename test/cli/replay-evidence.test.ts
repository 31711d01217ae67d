/**
 * A replay gate that saw no evidence must not pass: `portier replay` exits 2 on a log with no decision to
 * replay (empty, only other events, only decisions made before the policy) and on unreadable lines (the
 * readable output of `portier dev`), saying what it read; --skip-unreadable is the explicit way to replay a
 * log that mixes other lines, which are still counted.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { readableLine } from "../../src/cli/readable-log.js";
import { requireBundle } from "../support/bundle.js";
import { portierInProcess as portier, portierProcess } from "../support/cli.js";
import { applicationDecisionLine } from "../support/decision-log.js";
import { MAX_LOG_LINE_BYTES } from "../../src/review/replay.js";
import { boundedLines, LineTooLong } from "../../src/review/bounded-lines.js";

/** A decision the project's policy makes as logged: replayed, unchanged. */
const DECISION = applicationDecisionLine(true, "allowed");
/** A decision made before the policy (no token): in the log, but not replayable. */
const NO_TOKEN = JSON.stringify({ event: "decision", input: null, allow: false, reason: "token_missing" });

let dir: string;
const log = (name: string, lines: string[]) => {
  const file = join(dir, name);
  writeFileSync(file, lines.map((l) => `${l}\n`).join(""));
  return file;
};
const replay = (file: string, ...extra: string[]) =>
  portier(["replay", "--log", file, "--bundle", requireBundle(), "--fail-on", "new-allows", ...extra]);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "portier-replay-evidence-"));
});

describe("portier replay with no evidence exits 2 and says what it read", () => {
  it("an empty log", async () => {
    const r = await replay(log("empty.log", []));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/empty\.log: no decision replayed from 0 line\(s\): a replay that saw no decision/);
  });

  it("a log of `portier dev`'s readable lines (no JSON): the count and the first line's number", async () => {
    const file = log("dev.log", [readableLine(DECISION), readableLine(DECISION), "INFO  listening"]);
    const r = await replay(file);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /no decision replayed from 3 line\(s\) \(3 unreadable line\(s\), the first at line 1: not JSON /,
    );
    // --skip-unreadable does not make a log without a decision evidence.
    expect((await replay(file, "--skip-unreadable")).code).toBe(2);
  });

  it("a log of other events and decisions made before the policy only", async () => {
    const r = await replay(log("other.log", [JSON.stringify({ event: "listening" }), NO_TOKEN]));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /no decision replayed from 2 line\(s\) \(1 decision\(s\) made before the policy \(not replayable\)\)/,
    );
  });

  it("decisions with an unreadable line among them: 2, naming the line; 0 with --skip-unreadable", async () => {
    const file = log("mixed.log", [DECISION, DECISION, "Nov 27 07:15:03 host portier[1]: restarted", DECISION]);
    const r = await replay(file);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      new RegExp(
        String.raw`mixed\.log: 1 unreadable line\(s\), the first at line 3: not JSON \(.*\); pass ` +
          String.raw`--skip-unreadable if the log ` +
          String.raw`mixes`,
      ),
    );
    const skipped = await replay(file, "--skip-unreadable");
    expect(skipped.code).toBe(0);
    expect(skipped.stdout).toMatch(/^3 decision\(s\) replayed .*; 1 unreadable line\(s\)$/m);
  });

  it("a readable log of decisions still passes (0), in the real process too", async () => {
    const file = log("ok.log", [DECISION, NO_TOKEN, "", DECISION]);
    expect((await replay(file)).code).toBe(0);
    const r = await portierProcess(["replay", "--log", log("empty2.log", []), "--bundle", requireBundle()]);
    expect(r.code).toBe(2);
  }, 60_000);
});

describe("a line longer than the limit", () => {
  it("is counted as unreadable without being held, and the lines after it are read", async () => {
    const file = join(dir, "long.log");
    // 3 MiB without a newline, then a decision: the reader keeps at most 1 MiB of a line.
    writeFileSync(file, `${"x".repeat(3 * MAX_LOG_LINE_BYTES)}\n${DECISION}\r\n`);
    const r = await replay(file, "--skip-unreadable");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^! line 1: longer than the limit of 1048576 bytes \(3145728\)$/m);
    expect(r.stdout).toMatch(/^1 decision\(s\) replayed .* 1 unchanged; .*; 1 unreadable line\(s\)$/m);
    expect((await replay(file)).code).toBe(2);
  }, 60_000);
});

describe("boundedLines", () => {
  it("splits on \\n across chunks, drops a \\r before it, keeps the last line without a newline", async () => {
    const file = join(dir, "lines.txt");
    const long = "é".repeat(40_000); // 80,000 bytes: several read chunks, a character split between two
    writeFileSync(file, `a\r\n\n${long}\nlast`);
    const lines: unknown[] = [];
    for await (const l of boundedLines(file, 100_000)) lines.push(l);
    expect(lines).toEqual(["a", "", long, "last"]);
    const bounded: unknown[] = [];
    for await (const l of boundedLines(file, 1000)) bounded.push(l);
    expect(bounded).toEqual(["a", "", new LineTooLong(80_000), "last"]);
  });
});
