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
    expect(r.stderr).toMatch(/no decision replayed from 3 line\(s\) \(3 unreadable line\(s\), the first at line 1 /);
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
      /mixed\.log: 1 unreadable line\(s\), the first at line 3 \(.*\); pass --skip-unreadable if the log mixes/,
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
