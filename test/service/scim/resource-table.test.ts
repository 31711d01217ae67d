/**
 * The users' table: resources kept as JSON text and parsed when read. A read answers the resource as written,
 * a fresh object each time (changing it changes nothing held), in insertion order like a Map; a row's own text
 * (a snapshot from PostgreSQL) is kept as given.
 */
import { describe, expect, it } from "vitest";
import { ResourceTable } from "../../../src/service/scim/resource-table.js";
import type { ScimResource } from "../../../src/service/scim/resources.js";

const user = (id: string, userName: string): ScimResource => ({
  id,
  schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
  meta: { resourceType: "User", created: "t", lastModified: "t", version: 'W/"1"' },
  userName,
  roles: [{ value: "teacher" }],
});

describe("ResourceTable", () => {
  it("answers each resource as written, a new object at each read", () => {
    const t = new ResourceTable();
    const written = user("a", "alice");
    t.set("a", written);
    written.userName = "changed after the write";
    const read = t.get("a")!;
    expect(read).toEqual(user("a", "alice"));
    (read.roles as { value: string }[]).push({ value: "admin" });
    expect(t.get("a")).toEqual(user("a", "alice"));
    expect(t.get("a")).not.toBe(t.get("a"));
    expect(t.get("missing")).toBeUndefined();
  });

  it("keeps a row's text as given, and reads in insertion order like a Map", () => {
    const t = new ResourceTable();
    t.set("b", user("b", "bob"));
    t.set("a", user("a", "ignored"), '{"id": "a", "userName": "alice"}');
    t.set("c", user("c", "carol"));
    expect(t.delete("c")).toBe(true);
    expect(t.size).toBe(2);
    expect(t.has("a")).toBe(true);
    expect([...t.keys()]).toEqual(["b", "a"]);
    expect([...t.values()].map((r) => r.userName)).toEqual(["bob", "alice"]);
    expect([...t].map(([id, r]) => [id, r.userName])).toEqual([
      ["b", "bob"],
      ["a", "alice"],
    ]);
  });
});
