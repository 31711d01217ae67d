/**
 * Load generator for the gRPC Check row of the service benchmark, run as its own process (so it never
 * shares the server's event loop): a @grpc/grpc-js client on one HTTP/2 connection (as one Envoy worker
 * holds one to its ext_authz cluster) keeping CONCURRENCY Check calls in flight for SECONDS, the
 * CheckRequests Envoy sends with the tokens in turn and a path id that never repeats (or 42). Prints one JSON
 * line: requests, seconds, rps, p50Ms, p99Ms (from every call's latency), bad (errors and non-OK answers).
 * Usage: node grpc-load.mjs ADDRESS SECONDS CONCURRENCY SPEC_FILE  (SPEC_FILE: {tokens, pathTemplate, unique, start})
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";

const [address, secondsArg, concurrencyArg, specFile] = process.argv.slice(2);
const seconds = Number(secondsArg);
const concurrency = Number(concurrencyArg);
const spec = JSON.parse(readFileSync(specFile, "utf8"));
const protos = fileURLToPath(new URL("../../src/service/grpc/protos/", import.meta.url));
const defs = loadSync(["envoy/service/auth/v3/external_auth.proto"], {
  includeDirs: [protos],
  keepCase: true,
  longs: String,
  enums: String,
  defaults: false,
  oneofs: true,
});
const Authorization = grpc.makeClientConstructor(defs["envoy.service.auth.v3.Authorization"], "Authorization");
const client = new Authorization(address, grpc.credentials.createInsecure());

let id = spec.start;
let n = 0;
const request = () => {
  const path = spec.pathTemplate.replace("{id}", String(spec.unique ? id++ : 42));
  const token = spec.tokens[n++ % spec.tokens.length];
  return {
    attributes: {
      source: { address: { socket_address: { address: "10.0.0.7", port_value: 51234 } } },
      request: {
        http: {
          id: String(n),
          method: "GET",
          path,
          host: "api.example",
          scheme: "http",
          protocol: "HTTP/1.1",
          headers: {
            ":authority": "api.example",
            ":method": "GET",
            ":path": path,
            ":scheme": "http",
            authorization: `Bearer ${token}`,
            "x-request-id": `r-${n}`,
          },
        },
      },
    },
  };
};

const latencies = [];
let bad = 0;
let running = true;
const one = () =>
  new Promise((resolve) => {
    const t0 = process.hrtime.bigint();
    client.Check(request(), (err, res) => {
      if (running) {
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
        if (err || (res?.status?.code ?? 0) !== 0) bad++;
      }
      resolve();
    });
  });
const worker = async () => {
  while (running) await one();
};

await new Promise((resolve, reject) =>
  client.waitForReady(Date.now() + 10_000, (err) => (err ? reject(err) : resolve())),
);
const started = process.hrtime.bigint();
setTimeout(() => (running = false), seconds * 1000);
await Promise.all(Array.from({ length: concurrency }, worker));
const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
latencies.sort((a, b) => a - b);
const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
const summary = { requests: latencies.length, seconds: elapsed, rps: latencies.length / elapsed };
process.stdout.write(`${JSON.stringify({ ...summary, p50Ms: at(0.5), p99Ms: at(0.99), bad })}\n`);
client.close();
