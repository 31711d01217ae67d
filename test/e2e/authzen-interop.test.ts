/**
 * The AuthZEN working group's API-gateway interop decisions against the Todo example project, served as a user
 * serves it: `portier serve --project examples/authzen-todo --authzen-pep-key-file FILE` (the real process). Each
 * of the 25 decisions is asked on POST /access/v1/evaluation, then all 25 as one POST /access/v1/evaluations batch,
 * with the PEP key as the harness sends it (Authorization header).
 *
 * The table is ours, written from the expected decisions of the OpenID AuthZEN interop harness
 * (github.com/openid/authzen, interop/authzen-api-gateways/test-harness/test/decisions.json, MIT): the scenario's
 * five users by their subject ids (rick: admin and evil_genius; morty and summer: editor; beth and jerry: viewer),
 * five route questions each.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { portierProcess } from "../support/cli.js";
import { PROJECT_ROOT, startServe, tempDir, type ServiceProcess } from "../service/helpers.js";

const PROJECT = join(PROJECT_ROOT, "examples", "authzen-todo");
const KEY = "interop-pep-key-4b1d";

/** The scenario's subject ids (type "identity"). */
const USERS = {
  rick: "CiRmZDA2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs",
  morty: "CiRmZDE2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs",
  summer: "CiRmZDI2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs",
  beth: "CiRmZDM2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs",
  jerry: "CiRmZDQ2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs",
} as const;

/** [user, method, route template, expected decision]: the harness's 25, in its order. */
const DECISIONS: [keyof typeof USERS, string, string, boolean][] = [];
for (const user of ["rick", "morty", "summer", "beth", "jerry"] as const) {
  const writes = user !== "beth" && user !== "jerry";
  DECISIONS.push(
    [user, "GET", "/users/{userId}", true],
    [user, "GET", "/todos", true],
    [user, "POST", "/todos", writes],
    [user, "PUT", "/todos/{todoId}", writes],
    [user, "DELETE", "/todos/{todoId}", writes],
  );
}

const request = ([user, method, route]: (typeof DECISIONS)[number]) => ({
  subject: { type: "identity", id: USERS[user] },
  action: { name: method },
  resource: { type: "route", id: route },
});

describe("AuthZEN interop harness, API gateway scenario (examples/authzen-todo)", () => {
  let svc: ServiceProcess;
  beforeAll(async () => {
    const dir = tempDir();
    const bundle = join(dir, "todo.tar.gz");
    const built = await portierProcess(["bundle", "build", "--project", PROJECT, "--out", bundle]);
    if (built.code !== 0) throw new Error(`portier bundle build --project examples/authzen-todo: ${built.stderr}`);
    const keyFile = join(dir, "pep.key");
    writeFileSync(keyFile, KEY);
    svc = await startServe(["--project", PROJECT, "--bundle", bundle, "--authzen-pep-key-file", keyFile]);
  }, 120_000);
  afterAll(() => svc?.stop());

  const post = async (endpoint: string, body: unknown) => {
    const res = await fetch(`${svc.url}/access/v1/${endpoint}`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    return (await res.json()) as Record<string, unknown>;
  };

  it.each(DECISIONS)("evaluation: %s %s %s -> %s", async (...decision) => {
    const answer = await post("evaluation", request(decision));
    expect(answer.decision).toBe(decision[3]);
  });

  it("evaluations: the 25 as one batch, answered in order", async () => {
    const answer = await post("evaluations", { evaluations: DECISIONS.map(request) });
    const evaluations = answer.evaluations as { decision: boolean }[];
    expect(evaluations.map((e) => e.decision)).toEqual(DECISIONS.map((d) => d[3]));
  });
});
