/**
 * Preloaded into a server by test/bench/allocations.ts (`node --import ./heap-sampler.mjs ...`): the first
 * SIGUSR2 starts V8's sampling heap profiler through the inspector's public protocol, counting objects the
 * young and old collections have already freed (so it measures what is allocated, not what survives); the
 * second stops it and writes the profile (JSON, the DevTools .heapprofile format) to HEAP_SAMPLE_OUT.
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector";

const out = process.env.HEAP_SAMPLE_OUT;
const session = new Session();
session.connect();
let sampling = false;

process.on("SIGUSR2", () => {
  if (!sampling) {
    sampling = true;
    session.post("HeapProfiler.startSampling", {
      samplingInterval: Number(process.env.HEAP_SAMPLE_INTERVAL ?? 256),
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    return;
  }
  sampling = false;
  session.post("HeapProfiler.stopSampling", (err, result) => {
    if (err) process.stderr.write(`heap-sampler: ${err.message}\n`);
    else if (out) writeFileSync(out, JSON.stringify(result.profile));
  });
});
