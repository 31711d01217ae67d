/**
 * The sample data other code relies on: users (one per catalog role, synced-without-role, unsynced,
 * tenant B), the synced-users directory that must agree with them (read by the service's loader, every
 * record accepted), the clients, and schema errors that name the file and the field path.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import {
  DEFAULT_CLIENTS_FILE,
  DEFAULT_DIRECTORY_FILE,
  DEFAULT_USERS_FILE,
  DataFileError,
  createIssuer,
  loadClients,
  loadUsers,
} from "../../src/issuer/index.js";
import { entryRoles, loadDirectoryFile, loadRoleResolver } from "../../src/directory/index.js";
import { TENANT_A, TENANT_B } from "./helpers.js";

const users = loadUsers(DEFAULT_USERS_FILE);
const directoryIndex = await loadDirectoryFile(DEFAULT_DIRECTORY_FILE);
const rolesOf = entryRoles(loadRoleResolver(fileURLToPath(new URL("../../data/roles.json", import.meta.url))));
/** The sample directory as the service sees it under data/roles.json's names. */
const directory = {
  problems: directoryIndex.problems,
  entries: {
    size: directoryIndex.entries.size,
    get(sub: string) {
      const e = directoryIndex.entries.get(sub);
      return e && { tenant_id: e.tenant_id, roles: rolesOf(e) };
    },
  },
};
const directoryFile: unknown = JSON.parse(readFileSync(DEFAULT_DIRECTORY_FILE, "utf8"));
const clients = loadClients(DEFAULT_CLIENTS_FILE);
const roleIds = (
  JSON.parse(readFileSync(new URL("../../data/roles.json", import.meta.url), "utf8")) as {
    roles: Array<{ id: string }>;
  }
).roles.map((r) => r.id);
const tenants = (
  JSON.parse(readFileSync(new URL("../../data/tenants.json", import.meta.url), "utf8")) as {
    tenants: Array<{ tenant_id: string }>;
  }
).tenants.map((t) => t.tenant_id);
const byName = (name: string) => users.find((u) => u.preferred_username === name);

describe("sample users", () => {
  it("has one tenant-A user per catalog role, named after the role", () => {
    for (const role of roleIds) {
      const user = byName(role.replaceAll("_", "."));
      expect(user, role).toBeDefined();
      expect(user?.tenant_id).toBe(TENANT_A);
      expect(directory.entries.get(user!.sub)?.roles).toEqual([role]);
    }
  });

  it("has the synced user without role, the unsynced user and the tenant-B teacher", () => {
    expect(directory.entries.get(byName("synced.sans.role")!.sub)?.roles).toEqual([]);
    expect(byName("non.synchronise")).toBeDefined();
    const teacherB = byName("enseignant.jeune.b");
    expect(teacherB?.tenant_id).toBe(TENANT_B);
    expect(directory.entries.get(teacherB!.sub)).toEqual({ tenant_id: TENANT_B, roles: ["enseignant_jeune"] });
    expect(users).toHaveLength(roleIds.length + 3);
  });

  it("uses only the tenants of data/tenants.json and the dev password", () => {
    for (const u of users) {
      expect(tenants).toContain(u.tenant_id);
      expect(u.password).toBe("portier-dev");
      expect(u).not.toHaveProperty("roles");
    }
  });
});

describe("users.json and directory.json agree", () => {
  it("the directory holds every synced user (same sub and tenant) and not the unsynced one, once each", () => {
    expect(directory.problems).toEqual([]);
    const unsynced = byName("non.synchronise")!;
    expect(directory.entries.get(unsynced.sub)).toBeUndefined();
    const synced = users.filter((u) => u.sub !== unsynced.sub);
    for (const user of synced)
      expect(directory.entries.get(user.sub)?.tenant_id, user.preferred_username).toBe(user.tenant_id);
    expect(directory.entries.size).toBe(synced.length);
    expect(directoryFile).toHaveLength(synced.length);
  });
});

describe("sample clients", () => {
  it("has the user-flow public client and the two machine clients", () => {
    expect(clients.find((c) => c.client_id === "portier-demo-web")).toMatchObject({
      type: "public",
      grant_types: ["authorization_code"],
      redirect_uris: ["http://127.0.0.1:8400/callback", "http://localhost:8400/callback"],
      scopes: ["openid", "profile", "email", "apiclients"],
    });
    expect(clients.find((c) => c.client_id === "portier-demo-machine")).toMatchObject({
      type: "confidential",
      client_secret: "portier-demo-secret",
      grant_types: ["client_credentials"],
      tenant_id: TENANT_A,
    });
    expect(clients.find((c) => c.client_id === "portier-demo-machine-b")).toMatchObject({
      grant_types: ["client_credentials"],
      tenant_id: TENANT_B,
    });
  });
});

describe("schema validation at load", () => {
  const dir = mkdtempSync(join(tmpdir(), "portier-data-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, doc: unknown) => {
    const file = join(dir, name);
    writeFileSync(file, typeof doc === "string" ? doc : JSON.stringify(doc));
    return file;
  };

  it.each<[string, () => unknown, RegExp]>([
    [
      "users: bad sub",
      () => loadUsers(write("u1.json", { users: [{ ...users[0], sub: "not a subject id" }] })),
      /u1\.json: \/users\/0\/sub: must match pattern/,
    ],
    [
      "users: missing field",
      () => {
        const { email: _e, ...u } = users[0]!;
        return loadUsers(write("u2.json", { users: [u] }));
      },
      /u2\.json: \/users\/0: must have required property 'email'/,
    ],
    [
      "users: duplicate username",
      () =>
        loadUsers(
          write("u3.json", { users: [users[0], { ...users[1], preferred_username: users[0]!.preferred_username }] }),
        ),
      /u3\.json: \/users\/1\/preferred_username: duplicate/,
    ],
    [
      "clients: confidential without secret",
      () =>
        loadClients(
          write("c1.json", {
            clients: [
              {
                client_id: "m",
                type: "confidential",
                grant_types: ["client_credentials"],
                scopes: ["apiclients"],
                tenant_id: TENANT_A,
              },
            ],
          }),
        ),
      /c1\.json: \/clients\/0: must have required property 'client_secret'/,
    ],
    [
      "clients: unknown scope",
      () => loadClients(write("c2.json", { clients: [{ ...clients[0], scopes: ["admin"] }] })),
      /c2\.json: \/clients\/0\/scopes\/0: must be equal to one of the allowed values/,
    ],
    [
      "clients: redirect URI with a fragment",
      () =>
        loadClients(write("c3.json", { clients: [{ ...clients[0], redirect_uris: ["http://127.0.0.1:8400/cb#x"] }] })),
      /c3\.json: \/clients\/0\/redirect_uris\/0: must not contain a fragment/,
    ],
    ["not JSON", () => loadUsers(write("bad.json", "{")), /bad\.json: \(root\): not valid JSON/],
  ])("%s", (_name, load, message) => {
    expect(load).toThrow(DataFileError);
    expect(load).toThrow(message);
  });

  it("createIssuer refuses an invalid users file", async () => {
    const file = write("u4.json", { users: [{ ...users[0], extra: 1 }] });
    await expect(createIssuer({ issuerUrl: "http://127.0.0.1:1", usersFile: file })).rejects.toThrow(
      /u4\.json: \/users\/0: must NOT have additional properties \(extra\)/,
    );
  });
});
