/**
 * sortResources (RFC 7644 3.4.2.3) on resources in memory: the bound on how many one request sorts, and values of
 * mixed types. The orders seen over HTTP are in conformance.test.ts.
 */
import { describe, expect, it } from "vitest";
import { MAX_SORTED, sortResources } from "../../../src/service/scim/sort.js";
import { ScimError } from "../../../src/service/scim/scim-error.js";
import type { ScimResource } from "../../../src/service/scim/resources.js";

const resource = (id: string, extra: Record<string, unknown>) =>
  ({ id, schemas: [], meta: {}, ...extra }) as unknown as ScimResource;

describe("sortResources", () => {
  it("more matches than MAX_SORTED is 400 tooMany, naming the bound", () => {
    const many = Array.from({ length: MAX_SORTED + 1 }, (_, i) => resource(String(i), { userName: `u${i}` }));
    let err: unknown;
    try {
      sortResources(many, "userName");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ScimError);
    expect((err as ScimError).body()).toMatchObject({ status: "400", scimType: "tooMany" });
    expect((err as ScimError).message).toContain(String(MAX_SORTED));
    expect(sortResources(many.slice(0, MAX_SORTED), "userName")).toHaveLength(MAX_SORTED);
  });

  it.each([
    ["ascending", ["n1", "n2", "s", "t", "none"]],
    ["descending", ["none", "t", "s", "n2", "n1"]],
  ])("numbers, strings and a missing value, %s", (order, ids) => {
    const rs = [
      resource("s", { rank: "b" }),
      resource("none", {}),
      resource("n2", { rank: 10 }),
      resource("t", { rank: "C" }),
      resource("n1", { rank: 9 }),
    ];
    expect(sortResources(rs, "rank", order).map((r) => r.id)).toEqual(ids);
  });
});
