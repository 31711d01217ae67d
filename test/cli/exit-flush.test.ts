/**
 * A command's whole output reaches a reader that is slower than the command: `portier` exits only after
 * stdout is flushed (a pipe is written asynchronously; exiting at once cut off the end, the closing line).
 */
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { requireBundle } from "../support/bundle.js";
import { PORTIER_BIN } from "../support/portier-bin.js";

describe("portier's exit", () => {
  it("waits until a slow reader has every byte of a large output", async () => {
    const child = spawn(process.execPath, [PORTIER_BIN, "matrix", "--format", "json", "--bundle", requireBundle()], {
      cwd: PROJECT_ROOT,
    });
    // Read nothing for a while: the pipe fills (64 KiB) while the command has already finished writing.
    child.stdout.pause();
    await new Promise((r) => setTimeout(r, 1500));
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => (out += c));
    child.stdout.resume();
    const code = await new Promise<number | null>((r) => child.once("close", r));
    expect(code).toBe(0);
    expect(out.length).toBeGreaterThan(64 * 1024);
    expect((JSON.parse(out) as { rows: unknown[] }).rows).toHaveLength(29);
  }, 30_000);
});
