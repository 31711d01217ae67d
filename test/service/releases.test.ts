/**
 * Releases, the disposer of a partially started service: newest first, each step once, a throwing step does not
 * keep the others from running.
 */
import { describe, expect, it } from "vitest";
import { Releases } from "../../src/service/releases.js";

describe("Releases", () => {
  it("runs every step once, newest first, awaiting each, and goes on past one that throws", async () => {
    const ran: string[] = [];
    const r = new Releases();
    r.add(() => ran.push("verifier"));
    r.add(async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      ran.push("policy");
    });
    r.add(() => {
      throw new Error("already closed");
    });
    r.add(() => ran.push("server"));
    await r.release();
    expect(ran).toEqual(["server", "policy", "verifier"]);
    await r.release();
    expect(ran).toHaveLength(3);
  });
});
