/**
 * Rules per method end to end: `portier serve` with the Todo fixture's bundle (one route entry per method), real
 * signed tokens and a directory, asked through POST /decide and the nginx forward-auth endpoint. Viewers may read
 * but not POST, editors may POST and PUT, only admins DELETE; HEAD follows GET where no entry names HEAD.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { machineToken, makeKeys, sampleServeArgs, userToken } from "../helpers.js";
import { decide, serveInjected, type InjectedService } from "../inject.js";
import { buildTodoBundle, TODO_RECORDS, TODO_USERS } from "../../support/todo.js";

let svc: InjectedService;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  const keys = await makeKeys();
  const bundle = await buildTodoBundle();
  svc = await serveInjected([...sampleServeArgs(keys, TODO_RECORDS), "--bundle", bundle]);
  for (const [name, sub] of Object.entries(TODO_USERS)) tokens[name] = await userToken(keys, sub);
  tokens.application = await machineToken(keys);
}, 120_000);

afterAll(async () => {
  await svc?.stop();
});

type Caller = keyof typeof TODO_USERS | "application";

// [method, path, the callers allowed]; everyone else is denied with the reason of the last column.
const CASES: [string, string, Caller[], string][] = [
  ["GET", "/todos", ["viewer", "editor", "admin", "application"], "role_not_allowed"],
  ["POST", "/todos", ["editor", "admin", "application"], "role_not_allowed"],
  ["PUT", "/todos/42", ["editor", "admin", "application"], "role_not_allowed"],
  ["DELETE", "/todos/42", ["admin", "application"], "role_not_allowed"],
  ["HEAD", "/users/u1", ["viewer", "editor", "admin", "application"], "role_not_allowed"],
  ["HEAD", "/todos", ["viewer", "editor", "admin", "synced", "application"], "none"],
  ["PATCH", "/todos/42", [], "method_not_allowed"],
  ["GET", "/todos/42", [], "method_not_allowed"],
  ["POST", "/nothing", [], "route_unknown"],
];
const CALLERS: Caller[] = ["viewer", "editor", "admin", "synced", "application"];

describe("POST /decide on an API with writes", () => {
  it.each(
    CASES.flatMap(([method, path, allowed, reason]) =>
      CALLERS.map((caller) => ({ method, path, caller, allowed, reason })),
    ),
  )("$method $path by $caller", async ({ method, path, caller, allowed, reason }) => {
    const { status, json } = await decide(svc, { method, path, token: tokens[caller] });
    expect(status).toBe(200);
    const allow = allowed.includes(caller);
    expect(json).toMatchObject({ allow, reason: allow ? "allowed" : reason });
  });

  it("names the entry answering the method, and the methods a route answers when none does", async () => {
    const created = await decide(svc, { method: "post", path: "/todos", token: tokens.editor });
    expect(created.json).toMatchObject({
      allow: true,
      message: "user role editor is allowed on /todos",
      route: { product: "Todo", api: "Todos", template: "/todos", parameters: {} },
    });
    const viewer = await decide(svc, { method: "POST", path: "/todos", token: tokens.viewer });
    expect(viewer.json.message).toBe("none of the caller's roles [viewer] may call /todos (allowed: editor, admin)");
    const patch = await decide(svc, { method: "PATCH", path: "/todos/42", token: tokens.admin });
    expect(patch.json.message).toBe(
      "method PATCH is not allowed on /todos/{todoId}: no entry of this route for PATCH (it answers DELETE, PUT)",
    );
  });

  it("judges the method the gateway forwards (nginx X-Original-Method)", async () => {
    const ask = (token: string | undefined, method: string) =>
      svc.send("/forward-auth/nginx", {
        headers: {
          authorization: `Bearer ${token}`,
          "x-original-uri": "/todos/42",
          "x-original-method": method,
        },
      });
    expect((await ask(tokens.editor, "PUT")).status).toBe(200);
    const del = await ask(tokens.editor, "DELETE");
    expect(del.status).toBe(403);
    expect(del.headers["x-portier-reason"]).toBe("role_not_allowed");
    expect((await ask(tokens.admin, "DELETE")).status).toBe(200);
  });
});
