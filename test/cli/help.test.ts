/**
 * `--help` and `-h` on every sub-command: exit 0, the usage line, and every option of the table the command
 * parses with, each with its one-line description and default (in process); `portier` alone and `portier
 * --version` (the real process).
 */
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import type { CommandSpec, HelpRequest } from "../../src/cli/args.js";
import { COMMAND_NAMES as COMMANDS, portierProcess, portierInProcess as portier } from "../support/cli.js";

describe("portier <command> --help", () => {
  it.each(COMMANDS)(
    "%s: --help and -h list every option with its description and default",
    async (name) => {
      const { SPEC, run } = (await import(`../../src/cli/commands/${name}.ts`)) as {
        SPEC: CommandSpec;
        run: (argv: string[], io?: unknown) => Promise<number>;
      };
      const long = await portier([name, "--help"]);
      expect(long.code).toBe(0);
      expect(long.stderr).toBe("");
      // -h in process: the same text (id-token prints through its io, the others throw HelpRequest for main).
      let short = "";
      const answer = await run(["-h"], { out: (t: string) => (short = t), err: () => undefined }).then(
        (code) => code,
        (e: HelpRequest) => ((short = e.text), 0),
      );
      expect(answer).toBe(0);
      expect(`${short}\n`).toBe(long.stdout);
      expect(long.stdout).toMatch(new RegExp(`^usage: portier ${name} \\[options\\]`));
      const lines = long.stdout.split("\n");
      for (const [option, o] of Object.entries(SPEC.options)) {
        const at = lines.findIndex((l) => new RegExp(`^\\s+(-\\w, )?--${option}(?=\\s|$)`).test(l));
        expect(at, `--${option} in the help of ${name}`).toBeGreaterThan(-1);
        const text = `${lines[at]} ${lines[at + 1] ?? ""}`;
        expect(text).toContain(o.description);
        if (o.default !== undefined) expect(text).toContain(`(default: ${o.default})`);
      }
      expect(long.stdout).toMatch(/-h, --help +show this help and exit/);
    },
    90_000,
  );

  it("an unknown option exits 2 with one line: the option, the nearest one, the pointer to --help", async () => {
    const r = await portier(["matrix", "--formt", "md"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      "portier: unknown option --formt (did you mean --format?); portier matrix --help lists the options\n",
    );
  }, 60_000);

  it("a missing value, a value given to a switch: one line each, in our words (no parseArgs advice)", async () => {
    const missing = await portier(["matrix", "--format"]);
    expect(missing).toMatchObject({
      code: 2,
      stderr: "portier: --format needs a value; portier matrix --help lists the options\n",
    });
    const extra = await portier(["explain", "--json=yes", "GET", "/v1/roles"]);
    expect(extra).toMatchObject({
      code: 2,
      stderr: "portier: --json takes no value; portier explain --help lists the options\n",
    });
    // A value that looks like an option is not taken as the value.
    const ambiguous = await portier(["matrix", "--format", "--bundle", "x"]);
    expect(ambiguous).toMatchObject({
      code: 2,
      stderr: "portier: --format needs a value; portier matrix --help lists the options\n",
    });
  }, 60_000);

  it("diff has one spelling of its format: --json exits 2 naming --format json", async () => {
    for (const flag of ["--json", "--json=true"]) {
      const r = await portier(["diff", flag, "HEAD", "HEAD"]);
      expect(r).toMatchObject({
        code: 2,
        stderr: "portier: --json is no longer an option: write --format json; portier diff --help lists the options\n",
      });
    }
  }, 60_000);
});

describe("portier", () => {
  it("alone: lists the commands and says how to get a command's help", async () => {
    const r = await portierProcess([]);
    expect(r.code).toBe(0);
    for (const name of COMMANDS) expect(r.stdout).toMatch(new RegExp(`^  ${name} +\\S`, "m"));
    expect(r.stdout).toContain("portier <command> --help");
  }, 60_000);

  it("a mistyped command: one line with the nearest command, exit 2", async () => {
    const r = await portierProcess(["explian", "GET", "/"]);
    expect(r).toMatchObject({
      code: 2,
      stdout: "",
      stderr: 'portier: unknown command "explian" (did you mean explain?); portier --help lists the commands\n',
    });
  }, 60_000);

  it("--version prints the package version", async () => {
    const r = await portierProcess(["--version"]);
    expect(r.code).toBe(0);
    const pkg = JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")) as { version: string };
    expect(r.stdout).toBe(`portier ${pkg.version}\n`);
  }, 60_000);
});
