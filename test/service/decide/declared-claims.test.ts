/**
 * Claim names and the application token's shape declared per project (data/project.json claims and
 * application_token), end to end: `portier serve` with the Todo fixture's bundle whose project names the subject
 * `uid` and the tenant `org`, and whose application tokens carry the audience todo-api and no particular scope.
 * Decisions come from those claims (the directory record of uid, counted only for a token of the same org); a token
 * without the declared subject claim is an application token or refused with a reason naming what it lacks. A second
 * project declares no tenant claim: a record counts for any token. AuthZEN names the subject the same way.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildBundle } from "../../../src/toolchain/build-bundle.js";
import { opaPath } from "../../../src/toolchain/opa.js";
import { makeKeys, sampleServeArgs, sign, tempDir, type Keys } from "../helpers.js";
import { decide, serveInjected, type InjectedService } from "../inject.js";
import { todoProject, TODO_USERS } from "../../support/todo.js";
import { TENANT_A, TENANT_B } from "../../support/sample.js";

const PEP_KEY = "pep-key-0123456789abcdef";

/** The Todo fixture's bundle with these claims and application token declared. */
async function bundleDeclaring(claims: unknown, applicationToken: unknown): Promise<string> {
  const dir = todoProject();
  writeFileSync(
    join(dir, "data", "project.json"),
    JSON.stringify({
      role_checked_flows: ["accessCode", "application"],
      claims,
      user_token: { claims: [], scope: null },
      application_token: applicationToken,
      tenant_binding: null,
      role_list: { name: "the Todo role table", deprecated: false },
    }),
  );
  const out = join(dir, "build", "bundle.tar.gz");
  await buildBundle({ opa: opaPath(), projectDir: dir, workDir: join(dir, "build"), out });
  return out;
}

/** Directory records as the service reads them: `sub` is the subject claim's value, whatever the claim is named. */
const RECORDS = [
  { sub: TODO_USERS.viewer, tenant_id: TENANT_A, roles: ["viewer"] },
  { sub: TODO_USERS.editor, tenant_id: TENANT_A, roles: ["editor"] },
];

let keys: Keys;
let own: InjectedService;
let tenantless: InjectedService;

beforeAll(async () => {
  keys = await makeKeys();
  const keyFile = join(tempDir(), "pep.key");
  writeFileSync(keyFile, PEP_KEY);
  const [ownBundle, tenantlessBundle] = await Promise.all([
    bundleDeclaring({ subject: "uid", tenant: "org" }, { audience: "todo-api", scope: null }),
    bundleDeclaring({ subject: "uid", tenant: null }, { audience: null, scope: "todo.machine" }),
  ]);
  own = await serveInjected([
    ...sampleServeArgs(keys, RECORDS),
    "--bundle",
    ownBundle,
    "--authzen-pep-key-file",
    keyFile,
  ]);
  tenantless = await serveInjected([...sampleServeArgs(keys, RECORDS), "--bundle", tenantlessBundle]);
}, 120_000);

afterAll(async () => {
  await Promise.all([own?.stop(), tenantless?.stop()]);
});

const user = (uid: string, extra: Record<string, unknown> = {}) => ({ uid, org: TENANT_A, ...extra });

// [name, claims, method, path, the decision's status, flow, reason, message (a part of it)]; allowed when 200.
const OWN_CASES: [string, Record<string, unknown>, string, string, number, string | null, string, string][] = [
  ["uid names the viewer", user(TODO_USERS.viewer), "GET", "/todos", 200, "accessCode", "allowed", "role viewer"],
  [
    "uid names the viewer, who may not POST",
    user(TODO_USERS.viewer),
    "POST",
    "/todos",
    403,
    "accessCode",
    "role_not_allowed",
    "roles [viewer]",
  ],
  ["uid names the editor", user(TODO_USERS.editor), "POST", "/todos", 200, "accessCode", "allowed", "role editor"],
  [
    "sub is not the subject: a token with sub but no uid, of the audience todo-api, is an application's",
    { sub: TODO_USERS.editor, tenant_id: TENANT_A, aud: "todo-api", scope: "openid" },
    "POST",
    "/todos",
    403,
    "application",
    "role_not_allowed",
    "roles []",
  ],
  [
    "a record counts only for a token of the same org",
    user(TODO_USERS.editor, { org: TENANT_B }),
    "POST",
    "/todos",
    403,
    "accessCode",
    "role_not_allowed",
    "roles []",
  ],
  [
    "a token of no org is no record's",
    { uid: TODO_USERS.editor },
    "POST",
    "/todos",
    403,
    "accessCode",
    "role_not_allowed",
    "roles []",
  ],
  [
    "without uid and without the audience todo-api: refused, naming the audience",
    { sub: TODO_USERS.editor, aud: "apiclients", scope: "apiclients" },
    "GET",
    "/todos",
    401,
    null,
    "audience_mismatch",
    "a client-credentials token must have aud todo-api",
  ],
  [
    "an application token of the declared audience is role-checked",
    { client_id: "m", aud: "todo-api", scope: "anything" },
    "GET",
    "/todos",
    403,
    "application",
    "role_not_allowed",
    "roles []",
  ],
];

interface Answer {
  status: number;
  allow: boolean;
  flow: string | null;
  reason: string;
  message: string;
  subject: unknown;
}

describe("a project naming the subject uid and the tenant org", () => {
  it.each(OWN_CASES)("%s", async (_name, claims, method, path, status, flow, reason, message) => {
    const token = await sign(keys, claims);
    const { json } = await decide<Answer>(own, { method, path, token });
    expect(json).toMatchObject({ status, allow: status === 200, flow, reason });
    expect(json.message).toContain(message);
  });

  it("answers the subject and tenant read from the declared claims", async () => {
    const token = await sign(keys, user(TODO_USERS.editor, { sub: "someone-else", tenant_id: TENANT_B }));
    const { json } = await decide<Answer>(own, { method: "POST", path: "/todos", token });
    expect(json.subject).toEqual({ sub: TODO_USERS.editor, tenant_id: TENANT_A, roles: ["editor"] });
    const other = await sign(keys, user(TODO_USERS.editor, { org: TENANT_B }));
    expect((await decide<Answer>(own, { method: "POST", path: "/todos", token: other })).json.subject).toEqual({
      sub: TODO_USERS.editor,
      tenant_id: TENANT_B,
      roles: [],
    });
  });

  it("names the AuthZEN subject the same way (the record stands in for a token of uid and org)", async () => {
    const ask = async (id: string, method: string) => {
      const res = await own.fetch("/access/v1/evaluation", {
        method: "POST",
        headers: { authorization: `Bearer ${PEP_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({
          subject: { type: "user", id },
          action: { name: method },
          resource: { type: "route", id: "/todos" },
        }),
      });
      return (await res.json()) as { decision: boolean };
    };
    expect(await ask(TODO_USERS.editor, "POST")).toMatchObject({ decision: true });
    expect(await ask(TODO_USERS.viewer, "POST")).toMatchObject({ decision: false });
  });
});

describe("a project naming no tenant claim, and an application token by its scope alone", () => {
  // [name, claims, the decision's status, flow, reason, message (a part of it)]; allowed when 200.
  const CASES: [string, Record<string, unknown>, number, string | null, string, string][] = [
    [
      "a record counts whatever the token's org",
      user(TODO_USERS.editor, { org: TENANT_B }),
      200,
      "accessCode",
      "allowed",
      "",
    ],
    ["a record counts for a token of no org", { uid: TODO_USERS.editor }, 200, "accessCode", "allowed", ""],
    [
      "without uid nor the scope todo.machine: no flow, the reason names both",
      { sub: TODO_USERS.editor, aud: "todo-api", scope: "openid" },
      401,
      null,
      "token_shape_unknown",
      "neither a user token (uid) nor a client token (scope todo.machine, no uid)",
    ],
    [
      "an application token by its scope alone",
      { client_id: "m", scope: "todo.machine" },
      403,
      "application",
      "role_not_allowed",
      "",
    ],
  ];
  it.each(CASES)("%s", async (_name, claims, status, flow, reason, message) => {
    const token = await sign(keys, claims);
    const { json } = await decide<Answer>(tenantless, { method: "POST", path: "/todos", token });
    expect(json).toMatchObject({ status, allow: status === 200, flow, reason });
    expect(json.message).toContain(message);
  });
});
