import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { gzipSync } from "node:zlib";
import { beforeAll, describe, expect, it } from "vitest";
import {
  loadEngine,
  EngineLoadError,
  InProcessEngine,
  POLICY_ERROR_MESSAGE,
  tokenFacts,
  type DecisionInput,
} from "../../src/engine/index.js";
import { PolicyInstance } from "../../src/engine/policy-instance.js";
import { readBundle, type Bundle } from "../../src/engine/read-bundle.js";
import { requireBundle } from "../support/bundle.js";
import { controlledEngine } from "../support/engine.js";
import { tarOf } from "../support/tar.js";
import { TENANT_A } from "../support/sample.js";

const user = { sub: "u1", auth_time: 1, idp: "local", scope: ["apiclients"], tenant_id: TENANT_A };

function input(over: Partial<DecisionInput> = {}): DecisionInput {
  return {
    method: "GET",
    path: "/v2/ORG001/elevesJeunes/J1/absences",
    token: user,
    roles: ["enseignant_jeune"],
    synced: true,
    role_check: "enforce",
    ...over,
  };
}

let engine: InProcessEngine;
beforeAll(async () => {
  engine = await loadEngine(requireBundle());
});

describe("loading bundles", () => {
  const bundleBytes = () => readFileSync(requireBundle());
  const cases: [string, () => Uint8Array, string, RegExp][] = [
    ["not gzip", () => Buffer.from("hello"), "bundle_invalid", /not a gzip file/],
    ["gzip but not tar", () => gzipSync(Buffer.alloc(1024, 7)), "bundle_invalid", /tar|manifest/],
    ["no manifest", () => gzipSync(tarOf({ "/data.json": "{}" })), "manifest_invalid", /no \/.manifest/],
    [
      "manifest without wasm",
      () => gzipSync(tarOf({ "/.manifest": '{"revision":"x"}' })),
      "manifest_invalid",
      /field "wasm"/,
    ],
    [
      "bad manifest JSON",
      () => gzipSync(tarOf({ "/.manifest": "{nope" })),
      "bundle_invalid",
      /\.manifest: invalid JSON/,
    ],
    [
      "missing entrypoint",
      () =>
        gzipSync(
          tarOf({
            "/.manifest": JSON.stringify({ wasm: [{ entrypoint: "other/rule", module: "/policy.wasm" }] }),
            "/policy.wasm": "x",
          }),
        ),
      "entrypoint_missing",
      /"portier\/decision" is missing \(has: other\/rule\)/,
    ],
    [
      "module file absent",
      () =>
        gzipSync(
          tarOf({
            "/.manifest": JSON.stringify({ wasm: [{ entrypoint: "portier/decision", module: "/policy.wasm" }] }),
          }),
        ),
      "bundle_invalid",
      /no such file/,
    ],
    [
      "wasm garbage",
      () =>
        gzipSync(
          tarOf({
            "/.manifest": JSON.stringify({ wasm: [{ entrypoint: "portier/decision", module: "/policy.wasm" }] }),
            "/policy.wasm": "not wasm",
          }),
        ),
      "wasm_invalid",
      /not a valid WebAssembly module/,
    ],
    [
      "data not an object",
      () =>
        gzipSync(
          tarOf({
            "/.manifest": JSON.stringify({ wasm: [{ entrypoint: "portier/decision", module: "/policy.wasm" }] }),
            "/policy.wasm": "x",
            "/data.json": "[1]",
          }),
        ),
      "data_invalid",
      /must be a JSON object/,
    ],
    ["truncated", () => bundleBytes().subarray(0, 200), "bundle_invalid", /./],
  ];

  it.each(cases)("refuses a bundle that is %s", async (_name, bytes, code, message) => {
    const err = await loadEngine(bytes(), { source: "test.tar.gz" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineLoadError);
    expect((err as EngineLoadError).code).toBe(code);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message).toContain("test.tar.gz");
  });

  it("names the file it cannot read", async () => {
    const err = await loadEngine("/nonexistent/bundle.tar.gz").catch((e: unknown) => e);
    expect((err as EngineLoadError).code).toBe("bundle_unreadable");
    expect((err as Error).message).toContain("/nonexistent/bundle.tar.gz");
  });

  it("reads the revision from the manifest", () => {
    expect(engine.revision).toMatch(/^[0-9a-f]{12}$/);
    expect(engine.manifest.wasm?.map((w) => w.entrypoint)).toEqual(
      expect.arrayContaining(["portier/decision", "portier/catalog"]),
    );
  });
});

describe("deciding through the SDK", () => {
  it("allows and denies with reasons", async () => {
    expect(engine.decide(input())).toMatchObject({
      allow: true,
      status: 200,
      reason: "allowed",
      flow: "accessCode",
      deprecated: true,
    });
    expect(engine.decide(input({ roles: ["eleve_jeune"] }))).toMatchObject({
      allow: false,
      status: 403,
      reason: "role_not_allowed",
    });
  });

  const invalid: [string, unknown, RegExp][] = [
    ["extra field", { ...input(), admin: true }, /additional properties \(admin\)/],
    ["lower-case method", input({ method: "get" }), /input\.method/],
    ["relative path", input({ path: "v1/roles" }), /input\.path/],
    ["roles not a list", { ...input(), roles: "enseignant_jeune" }, /input\.roles must be array/],
    [
      "sub not a string",
      input({ token: { ...user, sub: 42 as unknown as string } }),
      /input\.token\.sub must be string/,
    ],
    ["mode unknown", { ...input(), role_check: "off" }, /input\.role_check/],
    ["null", null, /input must be object/],
  ];
  it.each(invalid)("denies input with %s (input_invalid)", (_name, bad, message) => {
    const d = engine.decide(bad as DecisionInput);
    expect(d).toMatchObject({ allow: false, status: 403, reason: "input_invalid" });
    expect(d.message).toMatch(message);
  });

  it("turns a wasm trap into a deny and replaces the instance", async () => {
    const controlled = await controlledEngine();
    const restore = controlled.override(() => {
      throw Object.assign(new Error("unreachable"), { name: "RuntimeError" });
    });
    const d = controlled.engine.decide(input());
    restore();
    expect(d).toMatchObject({ allow: false, reason: "policy_error" });
    // The wasm's text is the internal detail; the public message is fixed (it used to carry the trap's text).
    expect(d.message).toBe(POLICY_ERROR_MESSAGE);
    expect(d.detail).toContain("unreachable");
    expect(controlled.loads).toBe(2);
    expect(controlled.engine.decide(input())).toMatchObject({ allow: true });
  });

  it("denies when the policy answers something that is not a decision", async () => {
    const controlled = await controlledEngine();
    const answers: [string, () => unknown][] = [
      ["an empty result set", () => []],
      ["a result set the SDK cannot parse", () => JSON.parse("{nope") as unknown],
      ["allow not a boolean", () => [{ result: { allow: "yes" } }]],
      ["allow disagreeing with status", () => [{ result: { allow: true, status: 403, reason: "x", message: "m" } }]],
    ];
    for (const [, answer] of answers) {
      const restore = controlled.override(answer);
      expect(controlled.engine.decide(input())).toMatchObject({ allow: false, reason: "policy_error" });
      restore();
    }
    expect(controlled.engine.decide(input())).toMatchObject({ allow: true });
  });
});

describe("evaluation through the SDK's evaluate()", () => {
  // The reference: the unmodified SDK's evaluate() on a fresh instance of the same module and data.
  const sdk = createRequire(import.meta.url)(
    "@open-policy-agent/opa-wasm",
  ) as typeof import("@open-policy-agent/opa-wasm");
  let bundle: Bundle;
  let ours: PolicyInstance;
  let reference: ReturnType<typeof sdk.loadPolicySync>;
  beforeAll(async () => {
    bundle = await readBundle(readFileSync(requireBundle()), "b", ["portier/decision"]);
    ours = new PolicyInstance(bundle, "b");
    reference = sdk.loadPolicySync(new WebAssembly.Module(bundle.wasm));
    reference.setData(bundle.data);
  });

  // Large inputs outgrow the first memory pages (the engine's own checks cap the path; the instance has no cap).
  const cases: [string, unknown][] = [
    ["a valid input", input()],
    ["non-ASCII text", input({ path: "/v2/ORG001/elevesAdultes/Zoé/présences", token: { ...user, sub: "Zoë 😀" } })],
    ["a 300 kB id of 2-byte characters", input({ path: `/v2/ORG001/elevesJeunes/${"é".repeat(150_000)}/absences` })],
    ["a 600 kB id of 4-byte characters", input({ path: `/v2/ORG001/elevesJeunes/${"😀".repeat(150_000)}/absences` })],
    ["a small input after the large ones", input({ roles: ["eleve_jeune"] })],
    ["no input", undefined],
  ];
  it.each(cases)("answers what the SDK answers for %s", (_name, value) => {
    const expected = JSON.stringify(reference.evaluate(value, "portier/decision"));
    const got = ours.evaluate("portier/decision", value);
    expect(got.ok).toBe(true);
    expect(JSON.stringify((got as { results: unknown }).results)).toBe(expected);
    // The same input given as its JSON text (what the engine does).
    if (value !== undefined) {
      const text = ours.evaluateJson(ours.entrypointId("portier/decision")!, JSON.stringify(value));
      expect(JSON.stringify((text as { results: unknown }).results)).toBe(expected);
    }
  });
});

describe("tokenFacts", () => {
  it("keeps only what the policy reads and normalises lists", () => {
    expect(
      tokenFacts({ sub: "s", scope: "openid apiclients", aud: "apiclients", jti: "j", exp: 1, amr: ["pwd"] }),
    ).toEqual({ sub: "s", scope: ["openid", "apiclients"], aud: ["apiclients"] });
  });
});
