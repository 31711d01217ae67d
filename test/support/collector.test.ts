/**
 * The tests' collector trusts Content-Encoding as a real one does (issue 37 item 5): a gzip body without the
 * header is refused (400), so a shipper that stopped sending the header would fail every decision-log test; the
 * same body with the header, and plain JSON without it, are accepted.
 */
import { afterEach, describe, expect, it } from "vitest";
import { gzipSync } from "node:zlib";
import { startCollector, type Collector } from "./collector.js";

let collector: Collector | undefined;
afterEach(async () => {
  await collector?.close();
  collector = undefined;
});

describe("the test collector", () => {
  const json = JSON.stringify([{ decision_id: "d-1" }]);
  it.each([
    ["gzip with Content-Encoding: gzip", gzipSync(json), { "content-encoding": "gzip" }, 204],
    ["gzip without Content-Encoding", gzipSync(json), {}, 400],
    ["plain JSON without Content-Encoding", Buffer.from(json), {}, 204],
    ["plain JSON labelled gzip", Buffer.from(json), { "content-encoding": "gzip" }, 400],
  ])("%s: %s", async (_why, body, headers, status) => {
    collector = await startCollector();
    const res = await fetch(collector.url, {
      method: "POST",
      body: new Uint8Array(body),
      headers: { "content-type": "application/json", ...headers },
    });
    expect(res.status).toBe(status);
    expect(collector.events.length).toBe(status === 204 ? 1 : 0);
  });
});
