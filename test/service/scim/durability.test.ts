/**
 * --scim-journal: every change answered 2xx survives the process killed with SIGKILL right after the answer
 * (a real `portier serve` process), a journal whose last line was cut by a crash is repaired at start, and a
 * journal damaged elsewhere stops the start (exit 2) naming its line rather than losing a change.
 */
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { decide, ISSUER, makeKeys, runServe, startServe, tempDir, userToken, type ServiceProcess } from "../helpers.js";
import { TENANT_A } from "../../support/sample.js";
import { patchOp, scimRequest, serveScim, user, TEACHER_ROUTE, TOKEN } from "./support.js";

const keys = await makeKeys();
const dir = tempDir();
const journal = join(dir, "scim.journal");
writeFileSync(join(dir, "jwks.json"), JSON.stringify(keys.jwks));
writeFileSync(join(dir, "token"), TOKEN);
const args = [
  "--issuer",
  ISSUER,
  "--jwks",
  join(dir, "jwks.json"),
  "--scim-token-file",
  join(dir, "token"),
  "--scim-journal",
  journal,
  "--scim-tenant-id",
  TENANT_A,
];
const running: ServiceProcess[] = [];
afterAll(() => Promise.all(running.map((p) => p.stop())));

async function start(): Promise<ServiceProcess> {
  const p = await startServe(args);
  running.push(p);
  return p;
}

function kill9(p: ServiceProcess): Promise<void> {
  return new Promise((resolve) => {
    p.proc.once("exit", () => resolve());
    p.proc.kill("SIGKILL");
  });
}

const teacherAllowed = async (url: string, sub: string) =>
  (await decide(url, { method: "GET", path: TEACHER_ROUTE, token: await userToken(keys, sub) })).json.allow;

describe("the SCIM journal", () => {
  const subs = Array.from({ length: 20 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`);

  it("keeps every change answered 2xx across SIGKILL, and replays it at start", async () => {
    const first = await start();
    const group = await scimRequest(first.url, "POST", "/Groups", { displayName: "Enseignant jeune" });
    expect(group.status).toBe(201);
    const ids: string[] = [];
    for (const sub of subs) {
      const r = await scimRequest(first.url, "POST", "/Users", user(`${sub}@school.example`, sub));
      expect(r.status).toBe(201);
      ids.push(r.body.id);
    }
    const members = ids.slice(0, 10).map((value) => ({ value }));
    expect(
      (
        await scimRequest(
          first.url,
          "PATCH",
          `/Groups/${group.body.id}`,
          patchOp({ op: "add", path: "members", value: members }),
        )
      ).status,
    ).toBe(200);
    const last = await scimRequest(
      first.url,
      "PATCH",
      `/Users/${ids[0]}`,
      patchOp({ op: "replace", path: "active", value: false }),
    );
    expect(last.status).toBe(200);
    // Killed right after the last 2xx: no stop, no flush beyond what the answer waited for.
    await kill9(first);

    const second = await start();
    expect(await teacherAllowed(second.url, subs[0]!)).toBe(false); // deactivated, the last change
    expect(await teacherAllowed(second.url, subs[1]!)).toBe(true); // member of the group
    expect(await teacherAllowed(second.url, subs[15]!)).toBe(false); // synced, no role
    const listed = await scimRequest(second.url, "GET", "/Users?count=0");
    expect(listed.body.totalResults).toBe(20);
    const again = await scimRequest(second.url, "GET", `/Users/${ids[0]}`);
    expect(again.body.meta.version).toBe(last.body.meta.version);
    await second.stop();
  });

  it("cuts a last line left unfinished by a crash, and goes on", async () => {
    const before = readFileSync(journal, "utf8");
    appendFileSync(journal, '{"rev":999,"changes":[{"type":"User","id":"x","reso');
    const third = await start();
    expect(third.output()).toContain("scim_journal_cut");
    expect(readFileSync(journal, "utf8")).toBe(before);
    expect(await teacherAllowed(third.url, subs[1]!)).toBe(true);
    const r = await scimRequest(third.url, "POST", "/Users", user("after@school.example", "after-cut"));
    expect(r.status).toBe(201);
    await third.stop();
    expect(readFileSync(journal, "utf8").split("\n").filter(Boolean).length).toBe(
      before.split("\n").filter(Boolean).length + 1,
    );
  });

  it("refuses to start on a journal damaged before its end, naming the line", async () => {
    const lines = readFileSync(journal, "utf8").split("\n");
    lines[2] = "not a step";
    writeFileSync(join(dir, "damaged.journal"), lines.join("\n"));
    const damagedArgs = args.map((a) => (a === journal ? join(dir, "damaged.journal") : a));
    const r = await runServe(["--port", "0", "--host", "127.0.0.1", ...damagedArgs]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/config\.scimJournal: .*damaged\.journal:3: not a journal step/);
  });
});

describe("journal compaction", () => {
  it("a journal of many more steps than resources is rewritten as a snapshot at start, nothing lost", async () => {
    const folder = tempDir();
    const file = join(folder, "long.journal");
    const id = "5f1c0000-0000-4000-8000-000000000001";
    const at = "2026-11-28T00:00:00.000Z";
    const resource = (rev: number, active: boolean) => ({
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
      id,
      userName: "long@school.example",
      externalId: "long-sub",
      active,
      roles: [{ value: "enseignant_jeune" }],
      meta: { resourceType: "User", created: at, lastModified: at, version: `W/"${rev}"` },
    });
    const lines: string[] = [];
    for (let rev = 1; rev <= 12_001; rev++)
      lines.push(JSON.stringify({ rev, changes: [{ type: "User", id, resource: resource(rev, rev % 2 === 1) }] }));
    writeFileSync(file, `${lines.join("\n")}\n`);
    const svc = await serveScim(["--scim-journal", file], folder);
    try {
      expect(svc.output()).toContain("scim_journal_compacted");
      expect(readFileSync(file, "utf8").trim().split("\n")).toHaveLength(1);
      const got = await svc.scim("GET", `/Users/${id}`);
      expect(got.body).toMatchObject({ active: true, meta: { version: 'W/"12001"' } });
      expect((await svc.allowed("long-sub")).allow).toBe(true);
      // The next change carries the next revision, after the snapshot.
      const next = await svc.scim("PATCH", `/Users/${id}`, patchOp({ op: "replace", path: "active", value: false }));
      expect(next.body.meta.version).toBe('W/"12002"');
    } finally {
      await svc.stop();
    }
    const again = await serveScim(["--scim-journal", file], folder);
    try {
      expect((await again.scim("GET", `/Users/${id}`)).body.active).toBe(false);
    } finally {
      await again.stop();
    }
  });
});

describe("a group of concurrent changes (group commit)", () => {
  it("keeps every one answered 2xx across SIGKILL, however they were grouped into flushes", async () => {
    const file = join(dir, "concurrent.journal");
    const own = args.map((a) => (a === journal ? file : a));
    const first = await startServe(own);
    running.push(first);
    const subs = Array.from({ length: 40 }, (_, i) => `10000000-0000-4000-8000-${String(i).padStart(12, "0")}`);
    const created = await Promise.all(
      subs.map((sub) => scimRequest(first.url, "POST", "/Users", user(`${sub}@school.example`, sub))),
    );
    expect(created.map((r) => r.status)).toEqual(subs.map(() => 201));
    // All patched at once (8 deactivated: under the de-provisioning guard's floor, 32 renamed), then killed.
    const patched = await Promise.all(
      created.map((r, i) =>
        scimRequest(
          first.url,
          "PATCH",
          `/Users/${r.body.id}`,
          i < 8
            ? patchOp({ op: "replace", path: "active", value: false })
            : patchOp({ op: "replace", path: "displayName", value: `renamed ${i}` }),
        ),
      ),
    );
    expect(patched.map((r) => r.status)).toEqual(patched.map(() => 200));
    await kill9(first);

    const second = await startServe(own);
    running.push(second);
    expect((await scimRequest(second.url, "GET", "/Users?count=0")).body.totalResults).toBe(40);
    const got = await Promise.all(created.map((r) => scimRequest(second.url, "GET", `/Users/${r.body.id}`)));
    expect(got.map((r) => r.body.active)).toEqual(subs.map((_, i) => i >= 8));
    expect(got.map((r) => r.body.meta.version)).toEqual(patched.map((r) => r.body.meta.version));
    expect(got.slice(8).map((r) => r.body.displayName)).toEqual(subs.slice(8).map((_, i) => `renamed ${i + 8}`));
    expect(await teacherAllowed(second.url, subs[0]!)).toBe(false);
    await second.stop();
  });
});
