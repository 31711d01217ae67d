/**
 * The service benchmark's "same-shaped server" (test/bench/service.ts): a plain node:http server that does
 * what Portier's HTTP layer does around a decision, but takes no decision. It reads the whole request (POST:
 * the body, parsed as JSON; GET: the gateway's headers), and answers Portier's own answer to the benchmark
 * request (captured by the benchmark and passed in BENCH_SHAPE as JSON) with a fresh decision id, built the
 * same way (an object spread into writeHead, JSON.stringify, content-length).
 * Run: BENCH_SHAPE='{"decideBody":{...},"gatewayHeaders":{...},"gatewayBody":{...}}' node same-shaped-server.mjs PORT
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";

const shape = JSON.parse(process.env.BENCH_SHAPE ?? "{}");
const port = Number(process.argv[2]);

function send(res, headers, body) {
  const text = JSON.stringify(body);
  res.writeHead(200, {
    ...headers,
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
  });
  res.end(text);
}

createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const id = randomUUID();
    if (req.method === "POST") {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      if (typeof body.path !== "string" && typeof body.input !== "object")
        return send(res, {}, { error: "invalid_request" });
      return send(res, {}, { ...shape.decideBody, decision_id: id });
    }
    const h = req.headers;
    const seen = `${h["x-original-method"]} ${h["x-original-uri"]} ${h.authorization?.length}`;
    if (seen.length < 3) return send(res, {}, { error: "invalid_request" });
    send(res, { ...shape.gatewayHeaders, "x-portier-decision-id": id }, { ...shape.gatewayBody, decision_id: id });
  });
}).listen(port, "127.0.0.1");
