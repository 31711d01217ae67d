/**
 * A project's table test, written from its own data (data/routes.json, roles.json, tenants.json, project.json):
 * every route x role, and the application flow, with the answer the table gives, as Rego that `portier test`
 * runs against the compiled policy. The expectations are written out, not read from data/ at test time, so a
 * change of the table fails the test until the test is rewritten (`portier init --tests DIR`) and reviewed.
 */
import type { Catalog, RouteEntry } from "../catalog/index.js";
import { applicationTokenFacts, catalogTokenShape } from "../engine/index.js";

/** The file the test is written to, inside the project folder. */
export const GENERATED_TEST = "policies/routes_test.rego";

/** A request path for a template: each {parameter} filled in (the tenant parameter with the tenant's code). */
function samplePath(template: string, fill: (name: string) => string): string {
  return template.replace(/\{([^}]+)\}/g, (_, name: string) => fill(name));
}

const rego = (value: unknown): string => JSON.stringify(value);

function methodOf(route: RouteEntry & { methods?: string[] }): string {
  return route.methods?.[0] ?? "GET";
}

export function generatedTests(catalog: Catalog): string {
  const choices = catalog.project;
  const checked = new Set(choices?.role_checked_flows ?? ["accessCode", "application"]);
  const parameter = choices?.tenant_binding?.parameter;
  const tenant = catalog.tenants[0];
  const code = tenant?.codeOrganisme[0];
  const scope = choices?.user_token.scope;
  const roles = catalog.roles.map((r) => r.id);
  const tenantClaim = tenant ? { tenant_id: tenant.tenant_id } : {};
  const user = {
    sub: "generated-test-user",
    auth_time: 1700000000,
    idp: "local",
    ...(scope ? { scope: [scope] } : {}),
    ...tenantClaim,
  };
  const machine = {
    client_id: "generated-test-client",
    ...applicationTokenFacts(catalogTokenShape({ catalog }, "data")),
    ...tenantClaim,
  };
  const rows = catalog.routes.map((route) => {
    const path = samplePath(route.template, (name) => (name === parameter && code ? code : `${name}-1`));
    const allowed = route.allowed === "all_synced" ? roles : route.allowed;
    const userAllowed = roles.filter((role) => !checked.has("accessCode") || allowed.includes(role));
    return `\t[${rego(methodOf(route))}, ${rego(path)}, ${rego(userAllowed)}, ${!checked.has("application")}],`;
  });
  return [
    "# Written by `portier init` from this project's data/: every route x role, and the application flow, with the",
    "# answer the route table gives. Change data/routes.json and this test fails until it is rewritten",
    "# (`portier init --tests DIR`) and the difference reviewed.",
    "package project_routes_test",
    "",
    "import data.portier",
    "",
    `roles := ${rego(roles)}`,
    "",
    "# [method, a path of the route, the roles that may call it, whether an application token may]",
    "routes := [",
    ...rows,
    "]",
    "",
    `user_token := ${rego(user)}`,
    "",
    `machine_token := ${rego(machine)}`,
    "",
    "_input(method, path, token, user_roles, synced) := {",
    '\t"method": method, "path": path, "token": token,',
    '\t"roles": user_roles, "synced": synced, "role_check": "enforce",',
    "}",
    "",
    "test_each_route_and_role[[method, path, role]] if {",
    "\tsome [method, path, allowed, _] in routes",
    "\tsome role in roles",
    "\td := portier.decision with input as _input(method, path, user_token, [role], true)",
    "\texpected := role in allowed",
    "\td.allow == expected",
    "}",
    "",
    "test_application_tokens[[method, path]] if {",
    "\tsome [method, path, _, machine_allowed] in routes",
    "\td := portier.decision with input as _input(method, path, machine_token, [], false)",
    "\td.allow == machine_allowed",
    "}",
    "",
  ].join("\n");
}
