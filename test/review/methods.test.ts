/**
 * The review tools on an API with writes (the Todo fixture: one route entry per method): the matrix shows each
 * row's method in md, csv and html; `portier diff` and `portier review` name the method of a grant gained
 * ("viewer on POST /todos"), and review's SARIF points at the line of the entry answering that method.
 */
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync, cpSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { portierInProcess as portier } from "../support/cli.js";
import { lineOf } from "../support/review-repo.js";
import { todoProject } from "../support/todo.js";
import type { ReviewReport } from "../../src/review/index.js";

const POST_ENTRY = '"methods": ["POST"]';

/** Drops the project's policy tests (they test the spec's data, not the Todo fixture's). */
function withoutTests(dir: string): void {
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) withoutTests(full);
    else if (name.endsWith("_test.rego")) rmSync(full);
  }
}

let base: string;
let head: string;
const bundles = { base: "", head: "" };

beforeAll(async () => {
  base = todoProject();
  withoutTests(join(base, "policies"));
  head = mkdtempSync(join(tmpdir(), "portier-todo-head-"));
  cpSync(base, head, { recursive: true });
  const routes = join(head, "data", "routes.json");
  const text = readFileSync(routes, "utf8");
  const gained = text.replace(
    `${POST_ENTRY}, "allowed": ["editor", "admin"]`,
    `${POST_ENTRY}, "allowed": ["viewer", "editor", "admin"]`,
  );
  expect(gained).not.toBe(text);
  writeFileSync(routes, gained);
  for (const side of ["base", "head"] as const) {
    const dir = side === "base" ? base : head;
    bundles[side] = join(dir, "bundle.tar.gz");
    const built = await portier(["bundle", "build", "--project", dir, "--out", bundles[side]]);
    expect(built.stderr).toBe("");
  }
}, 120_000);

describe("the matrix of an API with writes", () => {
  it("md: a Method column per product, and a request per row of the grid", async () => {
    const r = await portier(["matrix", "--bundle", bundles.base, "--format", "md"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("| API | Route | Method | Allowed roles (accessCode) | application |");
    expect(r.stdout).toContain("| Todos | /todos | GET | Viewer; Editor; Admin | allowed |");
    expect(r.stdout).toContain("| Todos | /todos | POST | Editor; Admin | allowed |");
    expect(r.stdout).toContain("| Todo | /todos/{todoId} | DELETE | Admin | allowed |");
    expect(r.stdout).toContain("| POST /todos | - | Y | Y | - | - | Y |");
    expect(r.stdout).toContain("| HEAD /todos | Y | Y | Y | Y | - | Y |");
    // Probes: the methods a route has no row for.
    expect(r.stdout).toContain("| PATCH | application | denied (method_not_allowed) |");
  });

  it("csv and html carry the method", async () => {
    const csv = await portier(["matrix", "--bundle", bundles.base, "--format", "csv"]);
    const lines = csv.stdout.split("\n");
    expect(lines[0]).toBe("product,api,template,method,viewer,editor,admin,synced_without_role,not_synced,application");
    expect(lines).toContain(
      "Todo,Todos,/todos,POST,deny:role_not_allowed,allow,allow,deny:role_not_allowed,deny:role_not_allowed,allow",
    );
    const html = await portier(["matrix", "--bundle", bundles.base, "--format", "html"]);
    expect(html.stdout).toContain('<th scope="row"><code>POST /todos</code><span class="api">Todos</span></th>');
  });
});

describe("explain and replay on an API with writes", () => {
  it("portier explain runs the method check after the route, and names a read or a write", async () => {
    const post = await portier(["explain", "--bundle", bundles.base, "--role", "viewer", "POST", "/todos"]);
    expect(post.code).toBe(1);
    expect(post.stdout).toMatch(/^ {4}pass {2}method +\/todos answers POST \(a write\)$/m);
    expect(post.stdout).toMatch(/^ {4}FAIL {2}role list +role_not_allowed: .*\(allowed: editor, admin\)$/m);
    const get = await portier(["explain", "--bundle", bundles.base, "--role", "viewer", "GET", "/todos"]);
    expect(get.code).toBe(0);
    expect(get.stdout).toMatch(/^ {4}pass {2}method +\/todos answers GET \(a read\)$/m);
  });

  it("portier replay groups by method: a viewer's recorded POST and GET are apart", async () => {
    const token = { sub: "u-1", auth_time: 1, idp: "idp", scope: ["openid", "apiclients"] };
    const call = (method: string, allow: boolean, reason: string) =>
      JSON.stringify({
        event: "decision",
        revision: "logged",
        allow,
        reason,
        input: { method, path: "/todos", token, roles: ["viewer"], synced: true, role_check: "enforce" },
      });
    const log = join(head, "decisions.log");
    writeFileSync(log, [call("POST", false, "role_not_allowed"), call("GET", true, "allowed")].join("\n") + "\n");
    const r = await portier(["replay", "--log", log, "--bundle", bundles.head]);
    expect(r.stdout.split("\n")[0]).toBe(
      "+ 1 x POST /todos flow accessCode roles [viewer]: deny (role_not_allowed) -> allow   e.g. line 1: POST /todos",
    );
    expect(r.stdout).toContain("2 decision(s) replayed");
    expect(r.stdout).toContain(": 1 newly allowed, 0 newly denied, 0 with another deny reason, 1 unchanged;");
  });
});

describe("who gains POST on which route", () => {
  it("portier diff names the method", async () => {
    const r = await portier(["diff", bundles.base, bundles.head]);
    expect(r.stdout).toBe(
      "+ viewer on POST /todos: deny (role_not_allowed) -> allow\n" +
        "1 grant(s) gained, 0 lost; 0 other decision group(s) newly allowed, 0 newly denied; " +
        "0 route(s) added, 0 removed\n",
    );
  });

  it("portier review: the row's request is POST, and SARIF points at the POST entry's line", async () => {
    const json = await portier(["review", "--project", head, base, head, "--format", "json"]);
    const report = JSON.parse(json.stdout) as ReviewReport;
    expect(report.rows).toHaveLength(1);
    expect(report.rows[0]).toMatchObject({
      change: "gained",
      role: "viewer",
      request: "POST",
      routes: [{ product: "Todo", api: "Todos", template: "/todos" }],
      before: { allow: false, reason: "role_not_allowed" },
      after: { allow: true, reason: "allowed" },
      causes: [{ file: "data/routes.json", line: lineOf(head, "data/routes.json", POST_ENTRY) }],
    });
    const sarif = await portier(["review", "--project", head, base, head, "--format", "sarif"]);
    type Result = {
      message: { text: string };
      locations?: { physicalLocation: { artifactLocation: { uri: string }; region: { startLine: number } } }[];
    };
    const results = (JSON.parse(sarif.stdout) as { runs: { results: Result[] }[] }).runs[0]?.results ?? [];
    const gained = results.filter((x) => /gained/.test(x.message.text));
    expect(gained.map((x) => x.message.text)).toEqual([
      expect.stringMatching(/^Viewer \(viewer\) gained POST on \/todos: deny \(role_not_allowed\) -> allow/),
    ]);
    const at = gained[0]?.locations?.[0]?.physicalLocation;
    expect(`${at?.artifactLocation.uri}:${at?.region.startLine}`).toBe(
      `data/routes.json:${lineOf(head, "data/routes.json", POST_ENTRY)}`,
    );
  }, 120_000);
});
