/**
 * `portier serve` as a process: without an OTLP endpoint nothing of OpenTelemetry is loaded (a module hook
 * that refuses every @opentelemetry/* import lets the service start and decide, and refuses the same start
 * with an endpoint set, so the hook is known to bite) and the decision line has no trace ids; a bad OTEL_*
 * variable stops the start with one line naming it.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { decide, machineToken, makeKeys, runServe, sampleServeArgs, startServe, type Keys } from "../helpers.js";

let keys: Keys;
let noOtel: Record<string, string>;

beforeAll(async () => {
  keys = await makeKeys();
  const dir = mkdtempSync(join(tmpdir(), "portier-no-otel-"));
  const hooks = join(dir, "hooks.mjs");
  writeFileSync(
    hooks,
    `export async function resolve(specifier, context, next) {
  if (specifier.startsWith("@opentelemetry/")) throw new Error("refused import " + specifier);
  return next(specifier, context);
}
`,
  );
  const register = join(dir, "register.mjs");
  writeFileSync(
    register,
    `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
  );
  noOtel = { NODE_OPTIONS: `--import ${pathToFileURL(register).href}` };
});

describe("portier serve and tracing", () => {
  it("loads nothing of OpenTelemetry without an endpoint, and its lines have no trace ids", async () => {
    const svc = await startServe(sampleServeArgs(keys), noOtel);
    try {
      const res = await decide(svc.url, {
        method: "GET",
        path: "/v2/ORG001/elevesJeunes",
        token: await machineToken(keys),
      });
      expect(res.status).toBe(200);
      await new Promise((r) => setTimeout(r, 400)); // the log's flush period
      const line = svc
        .output()
        .split("\n")
        .find((l) => l.includes('"event":"decision"'));
      expect(line).toBeDefined();
      expect(line).not.toContain("trace_id");
      expect(line).not.toContain("span_id");
    } finally {
      await svc.stop();
    }
  }, 60_000);

  it("with an endpoint, the same hook refuses the start (the SDK is loaded only then)", async () => {
    const r = await runServe(sampleServeArgs(keys), {
      ...noOtel,
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9",
    });
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toContain("refused import @opentelemetry/");
  }, 60_000);

  it("refuses a bad OTEL_* variable at start, in one line naming it", async () => {
    const r = await runServe(sampleServeArgs(keys), {
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318",
      OTEL_TRACES_SAMPLER: "sometimes",
    });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(/^portier serve: OTEL_TRACES_SAMPLER="sometimes": not a sampler; use one of always_on/),
    ]);
  }, 60_000);
});
