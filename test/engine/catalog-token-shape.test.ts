/**
 * How a bundle's project reads tokens (catalogTokenShape) and the token facts the policy gets from it (tokenFacts):
 * the declared subject and tenant claims passed as sub and tenant_id, the spec's when none is declared, and a
 * malformed choice refusing the bundle.
 */
import { describe, expect, it } from "vitest";
import { catalogTokenShape, SPEC_TOKEN_SHAPE } from "../../src/engine/catalog-token-shape.js";
import { EngineLoadError } from "../../src/engine/errors.js";
import { tokenFacts } from "../../src/engine/token-facts.js";

const data = (project: unknown) => ({ catalog: { roles: [], project } });
const OWN = { subjectClaim: "uid", tenantClaim: "org", applicationAudience: "todo-api", applicationScope: null };

describe("catalogTokenShape", () => {
  it.each([
    ["no project", { catalog: {} }, SPEC_TOKEN_SHAPE],
    ["a project declaring neither", data({ role_checked_flows: [] }), SPEC_TOKEN_SHAPE],
    [
      "a project declaring both",
      data({ claims: { subject: "uid", tenant: "org" }, application_token: { audience: "todo-api", scope: null } }),
      OWN,
    ],
    [
      "no tenant, no audience",
      data({ claims: { subject: "uid", tenant: null }, application_token: { audience: null, scope: "s" } }),
      { subjectClaim: "uid", tenantClaim: null, applicationAudience: null, applicationScope: "s" },
    ],
  ])("reads %s", (_name, bundleData, shape) => {
    expect(catalogTokenShape(bundleData, "b.tar.gz")).toEqual(shape);
  });

  it.each([
    ["a null subject", data({ claims: { subject: null, tenant: null } }), "claims.subject"],
    ["claims not an object", data({ claims: "uid" }), "claims.subject"],
    ["an empty tenant", data({ claims: { subject: "uid", tenant: "" } }), "claims.tenant"],
    ["a numeric audience", data({ application_token: { audience: 1, scope: null } }), "application_token.audience"],
  ])("refuses the bundle for %s, naming the field", (_name, bundleData, field) => {
    let error: unknown;
    try {
      catalogTokenShape(bundleData, "b.tar.gz");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(EngineLoadError);
    expect((error as EngineLoadError).code).toBe("data_invalid");
    expect((error as Error).message).toContain(`b.tar.gz:/data.json: catalog.project.${field} must be`);
  });
});

describe("tokenFacts under a declared shape", () => {
  const claims = { sub: "s", tenant_id: "t", uid: "u", org: "o", client_id: "c", aud: "todo-api", scope: "a b" };

  it("passes the declared claims as sub and tenant_id, in the facts' order", () => {
    const facts = tokenFacts(claims, OWN);
    expect(facts).toEqual({ sub: "u", client_id: "c", tenant_id: "o", aud: ["todo-api"], scope: ["a", "b"] });
    expect(Object.keys(facts)).toEqual(["sub", "client_id", "tenant_id", "aud", "scope"]);
  });

  it("keeps the spec's by default, and passes no tenant when the project names none", () => {
    expect(tokenFacts(claims)).toMatchObject({ sub: "s", tenant_id: "t" });
    expect(tokenFacts(claims, { ...OWN, tenantClaim: null })).not.toHaveProperty("tenant_id");
  });

  it("never reads a claim the token does not carry itself (a name of Object.prototype)", () => {
    const facts = tokenFacts({ client_id: "c" }, { ...OWN, subjectClaim: "constructor", tenantClaim: "toString" });
    expect(facts).toEqual({ client_id: "c" });
  });
});
