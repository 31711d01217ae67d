/**
 * PartStack, the one release of a service's parts for a failed start and a stop: stage by stage (accept, drain,
 * parts, sinks, log), each stage's closes all finished before the next starts, each close once, a throwing close
 * does not keep the others from running, a part whose start throws leaves only what started before it.
 */
import { describe, expect, it } from "vitest";
import { PartStack, type Stop } from "../../src/service/part-stack.js";

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("PartStack", () => {
  it("closes stage by stage whatever the order of the parts, each once, past one that throws", async () => {
    const ran: string[] = [];
    const stack = new PartStack();
    await stack.use(() => ({ value: 1, close: { log: () => ran.push("log") } }));
    await stack.use(() => ({
      value: 2,
      close: {
        sinks: async () => {
          await tick(5);
          ran.push("sinks");
        },
      },
    }));
    await stack.use(() => ({
      value: 3,
      close: {
        parts: () => {
          throw new Error("already closed");
        },
      },
    }));
    const port = await stack.use(async () => {
      await tick(1);
      return {
        value: "port",
        close: {
          accept: () => ran.push("accept"),
          drain: async () => {
            await tick(10);
            ran.push("drain");
          },
        },
      };
    });
    expect(port).toBe("port");
    await stack.close({ deadline: Date.now(), started: true });
    expect(ran).toEqual(["accept", "drain", "sinks", "log"]);
    await stack.close({ deadline: Date.now(), started: true });
    expect(ran).toHaveLength(4);
  });

  it("runs the closes of one stage side by side, and passes each the stop", async () => {
    const seen: Stop[] = [];
    const ran: string[] = [];
    const stack = new PartStack();
    for (const name of ["slow", "fast"])
      await stack.use(() => ({
        value: name,
        close: {
          sinks: async (stop: Stop) => {
            seen.push(stop);
            await tick(name === "slow" ? 20 : 1);
            ran.push(name);
          },
        },
      }));
    const stop = { deadline: 42, started: false };
    await stack.close(stop);
    expect(ran).toEqual(["fast", "slow"]);
    expect(seen).toEqual([stop, stop]);
  });

  it("keeps nothing of a part whose start throws, and releases what started before it", async () => {
    const ran: string[] = [];
    const stack = new PartStack();
    await stack.use(() => ({ value: "keys", close: { parts: () => ran.push("keys") } }));
    await expect(
      stack.use(() => {
        throw new Error("config.bundle: not found");
      }),
    ).rejects.toThrow("config.bundle");
    await stack.close({ deadline: Date.now(), started: false });
    expect(ran).toEqual(["keys"]);
  });
});
