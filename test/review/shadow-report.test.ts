/**
 * `portier replay --shadow`: the differences a shadow candidate logged, grouped as replay groups its changes;
 * lines without `shadow` only counted, a malformed `shadow` reported by line, and the exit codes.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { renderShadow, renderShadowMarkdown, shadowLines } from "../../src/review/index.js";
import { portierInProcess as portier } from "../support/cli.js";

const input = (path: string, roles: string[]) => ({
  method: "GET",
  path,
  token: { sub: "u1", client_id: "web", scope: ["apiclients"], auth_time: 1, idp: "local" },
  roles,
  synced: true,
  role_check: "enforce",
});
/** A decision line as portier serve writes it; `shadow` only where the candidate answered otherwise. */
const decision = (
  path: string,
  route: string | null,
  allow: boolean,
  reason: string,
  shadow?: object,
  roles = ["enseignant_jeune"],
) =>
  JSON.stringify({
    level: 30,
    event: "decision",
    decision_id: "d",
    path,
    route,
    flow: "accessCode",
    allow,
    reason,
    revision: "enforced-1",
    input: input(path, roles),
    ...(shadow ? { shadow } : {}),
    msg: "decision",
  });

const LOG = [
  decision("/v1/roles", "/v1/roles", true, "allowed"),
  decision("/v2/ORG001/centres", "/v2/{codeOrganisme}/centres", false, "role_not_allowed", {
    allow: true,
    reason: "allowed",
    revision: "cand-2",
  }),
  decision("/v2/ORG002/centres", "/v2/{codeOrganisme}/centres", false, "role_not_allowed", {
    allow: true,
    reason: "allowed",
    revision: "cand-2",
  }),
  decision("/v1/roles", "/v1/roles", true, "allowed", { allow: false, reason: "role_not_allowed", revision: "cand-2" }),
  JSON.stringify({ level: 30, event: "decision", allow: false, reason: "token_missing", input: null }),
  decision("/v9", null, false, "route_unknown", { allow: false, reason: "policy_error", revision: "cand-2" }),
  decision("/v9", null, false, "route_unknown", { allow: "yes" }),
  "not json",
  JSON.stringify({ level: 30, event: "listening" }),
];

describe("shadow differences from a decision log", () => {
  it("groups them by change, route, flow, roles and outcomes, newly allowed first", async () => {
    const r = await shadowLines(LOG);
    expect(r).toMatchObject({
      lines: 9,
      decisions: 7,
      policyDecisions: 6,
      differing: 4,
      newlyAllowed: 2,
      newlyDenied: 1,
      reasonChanged: 1,
      malformedCount: 2,
      candidateRevisions: ["cand-2"],
      loggedRevisions: ["enforced-1"],
    });
    expect(r.changes.map((c) => [c.change, c.route, c.count, c.example.line])).toEqual([
      ["newly_allowed", "/v2/{codeOrganisme}/centres", 2, 2],
      ["newly_denied", "/v1/roles", 1, 4],
      ["reason_changed", null, 1, 6],
    ]);
    const text = renderShadow(r);
    expect(text.split("\n")).toContain(
      "+ 2 x /v2/{codeOrganisme}/centres flow accessCode roles [enseignant_jeune]: deny (role_not_allowed) -> allow" +
        "   e.g. line 2: GET /v2/ORG001/centres",
    );
    expect(text).toMatch(/^! line 7: shadow is not \{allow, reason, revision\}$/m);
    expect(text).toMatch(/^! line 8: not JSON/m);
    expect(text).toMatch(
      /^4 decision\(s\) answered otherwise by the shadow candidate under candidate revision cand-2: 2 newly allowed, /m,
    );
    expect(text).toMatch(
      /: 2 newly allowed, 1 newly denied, 1 with another deny reason; 6 policy decision\(s\) in the log /m,
    );
    expect(renderShadowMarkdown(r)).toMatch(/^\| newly allowed \| 2 \| `\/v2\/\{codeOrganisme\}\/centres` \|/m);
  });

  it("exits 1 on differences (or only newly allowed ones), 0 without, 2 on a log with no decision (CLI)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "portier-shadow-log-"));
    const file = (name: string, lines: string[]) => {
      writeFileSync(join(dir, name), lines.join("\n") + "\n");
      return join(dir, name);
    };
    const mixed = await portier(["replay", "--log", file("d.log", LOG), "--shadow"]);
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toMatch(/2 unreadable line\(s\), the first at line 7: shadow is not .*--skip-unreadable/);
    const differs = await portier(["replay", "--log", file("d.log", LOG), "--shadow", "--skip-unreadable"]);
    expect(differs.code).toBe(1);
    expect(differs.stdout).toMatch(/2 newly allowed, 1 newly denied/);
    const denyOnly = file("n.log", [LOG[0]!, LOG[3]!]);
    expect((await portier(["replay", "--log", denyOnly, "--shadow", "--fail-on", "new-allows"])).code).toBe(0);
    expect((await portier(["replay", "--log", denyOnly, "--shadow"])).code).toBe(1);
    const agreed = await portier(["replay", "--log", file("s.log", [LOG[0]!]), "--shadow", "--format", "json"]);
    expect(agreed.code).toBe(0);
    expect(JSON.parse(agreed.stdout)).toMatchObject({ decisions: 1, differing: 0, changes: [] });
    const empty = await portier(["replay", "--log", file("e.log", ["", "not json"]), "--shadow"]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/no decision line among 2 line\(s\)/);
    const both = await portier(["replay", "--log", denyOnly, "--shadow", "--bundle", "b.tar.gz"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--shadow reads the log's own candidate/);
  });
});
