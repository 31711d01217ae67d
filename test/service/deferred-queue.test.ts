/**
 * The one deferred queue (shadow evaluation, the decision-log pipeline): order kept, the bound refusing and
 * telling what it drops, a batch per turn with the rest scheduled, flush, and order kept over many turns.
 */
import { describe, expect, it } from "vitest";
import { DeferredQueue } from "../../src/service/deferred-queue.js";

function manual(o: { max: number; batch?: number }) {
  const turns: (() => void)[] = [];
  const processed: number[][] = [];
  const dropped: number[] = [];
  const queue = new DeferredQueue<number>({
    ...o,
    process: (items) => processed.push(items),
    dropped: (item) => dropped.push(item),
    schedule: (run) => turns.push(run),
  });
  const turn = () => turns.splice(0).forEach((run) => run());
  return { queue, turns, turn, processed, dropped };
}

describe("DeferredQueue", () => {
  it("hands everything waiting to one later turn, in order", () => {
    const { queue, turns, turn, processed } = manual({ max: 10 });
    for (const n of [1, 2, 3]) expect(queue.offer(n)).toBe(true);
    expect(processed).toEqual([]);
    expect(turns).toHaveLength(1);
    turn();
    expect(processed).toEqual([[1, 2, 3]]);
    expect(queue.size).toBe(0);
    expect(turns).toHaveLength(0);
  });

  it("refuses past its bound and tells what it dropped", () => {
    const { queue, turn, processed, dropped } = manual({ max: 2 });
    expect([1, 2, 3, 4].map((n) => queue.offer(n))).toEqual([true, true, false, false]);
    expect(dropped).toEqual([3, 4]);
    turn();
    expect(queue.offer(5)).toBe(true);
    turn();
    expect(processed).toEqual([[1, 2], [5]]);
  });

  it("processes a batch per turn and schedules the rest", () => {
    const { queue, turns, turn, processed } = manual({ max: 10, batch: 2 });
    for (let n = 1; n <= 5; n++) queue.offer(n);
    turn();
    expect(queue.size).toBe(3);
    expect(turns).toHaveLength(1);
    turn();
    turn();
    expect(processed).toEqual([[1, 2], [3, 4], [5]]);
    expect(turns).toHaveLength(0);
  });

  it("flush processes everything waiting at once", () => {
    const { queue, processed } = manual({ max: 10, batch: 1 });
    for (let n = 1; n <= 4; n++) queue.offer(n);
    queue.flush();
    expect(processed).toEqual([[1, 2, 3, 4]]);
    expect(queue.size).toBe(0);
  });

  it("runs on setImmediate by default", async () => {
    const seen: number[] = [];
    const queue = new DeferredQueue<number>({ max: 4, process: (items) => seen.push(...items), dropped: () => {} });
    queue.offer(7);
    expect(seen).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(seen).toEqual([7]);
  });

  it("keeps the order over many turns of partial batches while offers go on", () => {
    const { queue, turn, processed } = manual({ max: 10_000, batch: 70 });
    let next = 0;
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 100; i++) queue.offer(next++);
      turn();
    }
    queue.flush();
    expect(processed.flat()).toEqual(Array.from({ length: next }, (_, i) => i));
    expect(queue.size).toBe(0);
  });
});
