/**
 * The primary's answers to workers' scrape requests (answerMetricsRequests): a worker that exits while the
 * aggregation waits must not make the answer's send throw into a promise nobody handles (which ends the primary).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { answerMetricsRequests, type ScrapingWorker } from "../../src/service/cluster-metrics.js";

type Sent = { portier: string; id: number; text?: string; error?: string };

function worker(state: "connected" | "disconnected" | "send throws"): {
  w: ScrapingWorker;
  sent: unknown[];
  ask(id: number): void;
} {
  const sent: unknown[] = [];
  let listener: ((m: { portier: "portier:metrics-request"; id: number }) => void) | undefined;
  const w: ScrapingWorker = {
    isConnected: () => state !== "disconnected",
    send(m) {
      if (state === "send throws") throw new Error("Channel closed");
      sent.push(m);
      return true;
    },
    on(_event, l) {
      listener = l;
      return this;
    },
  };
  return { w, sent, ask: (id) => listener?.({ portier: "portier:metrics-request", id }) };
}

const ticks = async (n = 3) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

let unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeEach(() => {
  unhandled = [];
  process.on("unhandledRejection", onUnhandled);
});
afterEach(() => {
  process.off("unhandledRejection", onUnhandled);
});

describe("answerMetricsRequests", () => {
  const cases: {
    name: string;
    state: "connected" | "disconnected" | "send throws";
    metrics: () => Promise<string>;
    sent: Sent[];
  }[] = [
    {
      name: "answers a connected worker with the cluster's text",
      state: "connected",
      metrics: () => Promise.resolve("portier_decisions_total 3\n"),
      sent: [{ portier: "portier:metrics-answer", id: 7, text: "portier_decisions_total 3\n" }],
    },
    {
      name: "answers the aggregation's failure as an error",
      state: "connected",
      metrics: () => Promise.reject(new Error("a worker did not answer")),
      sent: [{ portier: "portier:metrics-answer", id: 7, error: "a worker did not answer" }],
    },
    {
      name: "drops the answer to a worker that exited while the aggregation waited",
      state: "disconnected",
      metrics: () => Promise.resolve("x 1\n"),
      sent: [],
    },
    {
      name: "a send that throws (the channel closed after the check) ends nothing",
      state: "send throws",
      metrics: () => Promise.resolve("x 1\n"),
      sent: [],
    },
  ];
  it.each(cases)("$name", async ({ state, metrics, sent }) => {
    const wk = worker(state);
    answerMetricsRequests(wk.w, { clusterMetrics: metrics });
    wk.ask(7);
    await ticks();
    expect(wk.sent).toEqual(sent);
    expect(unhandled).toEqual([]);
  });
});
