/**
 * The examples of README.md and docs/**\/*.md, run as a reader would run them: every ```sh block, from the
 * repository root, with `portier` on PATH (a shim to the built dist/cli/main.js, what `npm link` installs), in
 * bash with `set -e -o pipefail` and stderr joined to stdout. Its exit code must be 0 (or N for a block tagged
 * ```sh exit=N), and when a ```text block follows, the output must be that text: a line of `...` stands for any
 * lines, `...` inside a line for any text, trailing spaces are ignored. ```sh no-run blocks (a cluster, docker)
 * are skipped and counted.
 *
 * The blocks of one page run in order, like a reader following it: a block may start a server in the
 * background (`portier dev ... &`) for the next ones, as the page says; every process a page started is
 * stopped when the page is done. Ports: other runs share this machine, so the default ports the pages use
 * (8181 the service, 9400 the issuer, 8400 the sign-in page, 8080 a gateway, 9000 an application) are replaced in each
 * page's blocks
 * and outputs by free ones, as the gateway tests replace the shipped configurations' ports.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { freePort } from "../support/free-port.js";
import { PORTIER_BIN } from "../support/portier-bin.js";

const DEFAULT_PORTS = [8181, 9400, 8400, 8080, 9000];
const BLOCK_MS = 120_000;

interface Example {
  line: number;
  script: string;
  exitCode: number;
  run: boolean;
  expected?: string;
}

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? markdownFiles(join(dir, e.name)) : e.name.endsWith(".md") ? [join(dir, e.name)] : [],
  );
}

/** The ```sh blocks of a page, each with the ```text block right after it (blank lines between allowed). */
function examplesOf(text: string): Example[] {
  const lines = text.split("\n");
  const examples: Example[] = [];
  let i = 0;
  const fenceAt = (n: number) => /^(```+)\s*(\S*)\s*(.*)$/.exec(lines[n] ?? "");
  const body = (start: number, fence: string): [string, number] => {
    let end = start + 1;
    while (end < lines.length && lines[end]!.trim() !== fence) end++;
    return [lines.slice(start + 1, end).join("\n"), end];
  };
  while (i < lines.length) {
    const open = fenceAt(i);
    if (!open) {
      i++;
      continue;
    }
    const [, fence, lang, info] = open;
    const [script, end] = body(i, fence!);
    if (lang === "sh") {
      const example: Example = {
        line: i + 1,
        script,
        run: !/\bno-run\b/.test(info!),
        exitCode: Number(/\bexit=(\d+)/.exec(info!)?.[1] ?? 0),
      };
      let next = end + 1;
      while (next < lines.length && lines[next]!.trim() === "") next++;
      const after = fenceAt(next);
      if (after && after[2] === "text") {
        const [expected, textEnd] = body(next, after[1]!);
        example.expected = expected;
        examples.push(example);
        i = textEnd + 1;
        continue;
      }
      examples.push(example);
    }
    i = end + 1;
  }
  return examples;
}

/** Whether `actual` is what `expected` shows, `...` standing for any lines (alone) or any text (in a line). */
function matchesOutput(actual: string, expected: string): boolean {
  const trim = (s: string) =>
    s
      .replace(/\s+$/, "")
      .split("\n")
      .map((l) => l.replace(/\s+$/, ""));
  const want = trim(expected);
  const got = trim(actual);
  const lineMatches = (pattern: string, line: string) =>
    new RegExp(
      `^${pattern
        .split("...")
        .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
        .join(".*")}$`,
    ).test(line);
  const match = (w: number, g: number): boolean => {
    if (w === want.length) return g === got.length;
    if (want[w] === "...") {
      for (let k = g; k <= got.length; k++) if (match(w + 1, k)) return true;
      return false;
    }
    return g < got.length && lineMatches(want[w]!, got[g]!) && match(w + 1, g + 1);
  };
  return match(0, 0);
}

const pages = [join(PROJECT_ROOT, "README.md"), ...markdownFiles(join(PROJECT_ROOT, "docs"))]
  .map((file) => ({ file, examples: examplesOf(readFileSync(file, "utf8")) }))
  .filter((p) => p.examples.length > 0);

/** A folder holding `portier`, a shim to the built CLI, as `npm link` would put on PATH. */
function shimFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), "portier-docs-bin-"));
  const shim = join(dir, "portier");
  writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" "${PORTIER_BIN}" "$@"\n`);
  chmodSync(shim, 0o755);
  return dir;
}
const BIN = shimFolder();

function runBlock(script: string, started: ChildProcess[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", `exec 2>&1\nset -e -o pipefail\n${script}`], {
      cwd: PROJECT_ROOT,
      detached: true,
      stdio: ["ignore", "pipe", "ignore"],
      env: { ...process.env, PATH: `${BIN}:${process.env["PATH"] ?? ""}` },
    });
    started.push(child);
    let output = "";
    // The pipe stays open while a background server the block started still holds it: wait for bash only.
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => {
      stopAll([child], "SIGKILL");
      reject(new Error(`the block ran over ${BLOCK_MS} ms:\n${output}`));
    }, BLOCK_MS);
    child.on("error", reject);
    child.on("exit", (code) => {
      clearTimeout(timer);
      // Let the pipe deliver what the block wrote last: its end, or 2 s when a background server still holds it.
      const done = () => (clearTimeout(wait), resolve({ code: code ?? 1, output }));
      const wait = setTimeout(done, 2_000);
      child.stdout.once("end", done);
      if (child.stdout.readableEnded) done();
    });
  });
}

function stopAll(started: ChildProcess[], signal: NodeJS.Signals = "SIGTERM"): void {
  for (const child of started) {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // the group has already ended
    }
  }
}

let ran = 0;
let skipped = 0;
afterAll(() => {
  console.log(`docs examples: ${ran} run, ${skipped} no-run skipped`);
});

describe("the runner itself", () => {
  it("finds the examples of the pages, the README's among them", () => {
    expect(pages.some((p) => p.file.endsWith("README.md"))).toBe(true);
  });

  it("reads sh, sh no-run and sh exit=N blocks and the text block after one", () => {
    const page = [
      "```sh",
      "portier --version",
      "```",
      "",
      "```text",
      "portier 0.1.0",
      "```",
      "```sh no-run",
      "kubectl apply -f x",
      "```",
      "```sh exit=1",
      "portier explain GET /nope",
      "```",
      "```json",
      "{}",
      "```",
    ];
    expect(examplesOf(page.join("\n"))).toEqual([
      { line: 1, script: "portier --version", run: true, exitCode: 0, expected: "portier 0.1.0" },
      { line: 8, script: "kubectl apply -f x", run: false, exitCode: 0 },
      { line: 11, script: "portier explain GET /nope", run: true, exitCode: 1 },
    ]);
  });

  it.each([
    ["a\nb", "a\nb", true],
    ["a\nb  ", "a\nb", true],
    ["a\nb", "a\nc", false],
    ["a\nb", "a", false],
    ["a\nx\ny\nb", "a\n...\nb", true],
    ["a\nb", "a\n...\nb", true],
    ["decision 7f3a allowed", "decision ... allowed", true],
    ["decision 7f3a denied", "decision ... allowed", false],
    ["a (b) [c]", "a (b) [c]", true],
  ])("output %j against %j: %s", (actual, expected, result) => {
    expect(matchesOutput(actual, expected)).toBe(result);
  });

  it("a block's exit code is its last failing command's (set -e)", async () => {
    const started: ChildProcess[] = [];
    expect(await runBlock("echo one\nfalse\necho two", started)).toEqual({ code: 1, output: "one\n" });
    expect((await runBlock("portier --version", started)).output).toMatch(/^portier \d+\.\d+\.\d+\n$/);
  });
});

for (const { file, examples } of pages) {
  describe(relative(PROJECT_ROOT, file), () => {
    const started: ChildProcess[] = [];
    const ports = new Map<string, string>();
    afterAll(() => stopAll(started));
    const withPorts = (text: string) => text.replace(/\b(8181|9400|8400|8080|9000)\b/g, (p) => ports.get(p) ?? p);

    for (const example of examples) {
      const name = `line ${example.line}: ${example.script.split("\n")[0]}`;
      if (!example.run) {
        skipped++;
        it.skip(name, () => undefined);
        continue;
      }
      it(
        name,
        async () => {
          if (ports.size === 0) for (const p of DEFAULT_PORTS) ports.set(String(p), String(await freePort()));
          ran++;
          const { code, output } = await runBlock(withPorts(example.script), started);
          expect(code, `exit code of the block at ${relative(PROJECT_ROOT, file)}:${example.line}\n${output}`).toBe(
            example.exitCode,
          );
          if (example.expected !== undefined)
            expect(
              matchesOutput(output, withPorts(example.expected)),
              `output of the block at ${relative(PROJECT_ROOT, file)}:${example.line}:\n${output}`,
            ).toBe(true);
        },
        BLOCK_MS + 5_000,
      );
    }
  });
}
