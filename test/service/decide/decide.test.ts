/**
 * createDecide in process, with a fake verifier (the token is its claims as JSON), a fake directory and a
 * fake engine that records its input: the tenant rule of directory records, the roles claim format, the
 * denies made without the policy (policy_unavailable, internal_error) and the final fail-closed guard.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { pino } from "pino";
import { TokenError } from "../../../src/auth/index.js";
import { loadCatalog } from "../../../src/catalog/index.js";
import { roleResolver, type DirectoryEntry, type RoleResolver } from "../../../src/directory/index.js";
import type { Decision, DecisionEngine, DecisionInput } from "../../../src/engine/index.js";
import { createDecide } from "../../../src/service/decide/decide.js";
import { PROJECT_ROOT } from "../../../src/toolchain/project-root.js";
import { TENANT_A, TENANT_B } from "../../support/sample.js";
import { ALLOW, fixedPolicy } from "../../support/policy-snapshot.js";

const RESOLVE = roleResolver(loadCatalog(join(PROJECT_ROOT, "data")).roles);
const TEACHER = "11111111-1111-4111-8111-111111111111";

interface Fakes {
  records?: Record<string, DirectoryEntry>;
  rolesClaim?: string;
  /** What the engine answers (or throws); undefined engine: no policy loaded. */
  answer?: (() => unknown) | null;
  lookup?: (sub: string) => DirectoryEntry | undefined;
  verify?: (token: string) => Promise<{ claims: Record<string, unknown> }>;
  resolveRole?: RoleResolver;
}

function setup(f: Fakes = {}) {
  const inputs: DecisionInput[] = [];
  const verifier = {
    verify:
      f.verify ??
      (async (token: string) => ({ claims: JSON.parse(token) as Record<string, unknown>, header: {}, cached: false })),
  };
  const answer = f.answer === undefined ? () => ALLOW : f.answer;
  const engine: DecisionEngine | undefined = answer
    ? {
        revision: "test",
        roles: [],
        decide: (input) => (inputs.push(input), answer() as Decision),
      }
    : undefined;
  const records: Record<string, DirectoryEntry> = f.records ?? {
    [TEACHER]: { tenant_id: TENANT_A, names: ["enseignant_jeune"] },
  };
  const decide = createDecide({
    verifier,
    policy: fixedPolicy(engine, f.resolveRole ?? RESOLVE),
    directory: { lookup: f.lookup ?? ((sub) => records[sub]) },
    rolesClaim: f.rolesClaim,
    roleCheck: "enforce",
    logger: pino({ level: "silent" }),
    metrics: undefined,
  });
  return {
    inputs,
    ask: (claims: Record<string, unknown>) =>
      decide({ method: "GET", path: "/v1/roles", token: JSON.stringify(claims) }, "test"),
  };
}

const user = (extra: Record<string, unknown> = {}) => ({
  sub: TEACHER,
  client_id: "web",
  tenant_id: TENANT_A,
  ...extra,
});

describe("a directory record counts only for a token of its tenant", () => {
  const cases: [string, string | undefined, string, boolean][] = [
    ["tenant A token, record of tenant A", TENANT_A, TENANT_A, true],
    ["tenant B token, record of tenant A", TENANT_B, TENANT_A, false],
    ["tenant A token, record of tenant B", TENANT_A, TENANT_B, false],
    ["token without tenant_id, record of tenant A", undefined, TENANT_A, false],
  ];
  it.each(cases)("%s", async (_name, tokenTenant, recordTenant, synced) => {
    const { inputs, ask } = setup({ records: { [TEACHER]: { tenant_id: recordTenant, names: ["directeur_jeune"] } } });
    const answer = await ask(user({ tenant_id: tokenTenant }));
    expect(inputs[0]).toMatchObject({ synced, roles: synced ? ["directeur_jeune"] : [] });
    expect(answer.subject?.roles).toEqual(synced ? ["directeur_jeune"] : []);
  });
});

describe("the roles claim: a JSON array of names, or a string of one name or a comma-separated list", () => {
  const cases: [string, unknown, string[], boolean][] = [
    ["a label with a space", "Enseignant jeune", ["enseignant_jeune"], true],
    [
      "a comma-separated list of labels",
      "Enseignant jeune, DIRECTEUR  JEUNE",
      ["enseignant_jeune", "directeur_jeune"],
      true,
    ],
    ["a comma-separated list of ids", "enseignant_jeune,eleve_adulte", ["enseignant_jeune", "eleve_adulte"], true],
    ["space-separated ids (one unknown name, never split on spaces)", "enseignant_jeune directeur_jeune", [], true],
    [
      "an array of ids, labels and aliases, repeats once",
      ["Parent de l'élève jeune", "directeur_jeune", "Directeur jeune"],
      ["parent_eleve_jeune", "directeur_jeune"],
      true,
    ],
    ["an array with unknown names and non-strings", ["astronaute", 42, "Élève adulte"], ["eleve_adulte"], true],
    ["an empty string", "", [], true],
    ["a number (not a roles claim)", 42, [], false],
    ["an object (not a roles claim)", { role: "enseignant_jeune" }, [], false],
    ["absent", undefined, [], false],
  ];
  it.each(cases)("%s", async (_name, claim, roles, synced) => {
    // The directory would say otherwise: with a roles claim configured it is not consulted.
    const { inputs, ask } = setup({ rolesClaim: "roles" });
    await ask(user(claim === undefined ? {} : { roles: claim }));
    expect(inputs[0]).toMatchObject({ roles, synced });
  });

  it("resolves names with the policy's current resolver (the loaded bundle's catalog)", async () => {
    const bundleNames = roleResolver([
      { id: "enseignant_jeune", label: "Enseignant jeune", aliases: ["Professeur des écoles"] },
    ]);
    const { inputs, ask } = setup({ rolesClaim: "roles", resolveRole: bundleNames });
    await ask(user({ roles: "Professeur des écoles" }));
    expect(inputs[0]?.roles).toEqual(["enseignant_jeune"]);
  });
});

describe("denies made without the policy", () => {
  it("no policy loaded: 403 policy_unavailable", async () => {
    const answer = await setup({ answer: null }).ask(user());
    expect(answer).toMatchObject({ allow: false, status: 403, reason: "policy_unavailable" });
  });

  const failures: [string, Fakes][] = [
    [
      "the engine throws",
      {
        answer: () => {
          throw new Error("boom");
        },
      },
    ],
    [
      "the directory lookup throws",
      {
        lookup: () => {
          throw new Error("boom");
        },
      },
    ],
    [
      "the verifier throws something else than a TokenError",
      {
        verify: async () => {
          throw new Error("boom");
        },
      },
    ],
    [
      "the verifier answers no claims object (outside its type)",
      { verify: async () => JSON.parse("{}") as { claims: Record<string, unknown> } },
    ],
  ];
  it.each(failures)("%s: 403 internal_error", async (_name, fakes) => {
    const answer = await setup(fakes).ask(user());
    expect(answer).toMatchObject({ allow: false, status: 403, reason: "internal_error" });
  });

  it("a TokenError stays a 401 with its code", async () => {
    const answer = await setup({
      verify: async () => {
        throw new TokenError("token_expired", "expired");
      },
    }).ask(user());
    expect(answer).toMatchObject({ allow: false, status: 401, reason: "token_expired" });
  });
});

describe("only a well-formed allow is an allow (final guard)", () => {
  it("a well-formed allow passes", async () => {
    expect(await setup().ask(user())).toMatchObject({ allow: true, status: 200, reason: "allowed" });
  });

  const malformed: [string, unknown, number][] = [
    ["allow true with status 403", { ...ALLOW, status: 403 }, 403],
    ["allow true with status 401", { ...ALLOW, status: 401 }, 401],
    ["allow true with status 201", { ...ALLOW, status: 201 }, 403],
    ["allow true without a status", { ...ALLOW, status: undefined }, 403],
    ['allow "true" (a string) with status 200', { ...ALLOW, allow: "true" }, 403],
    ["allow 1 with status 200", { ...ALLOW, allow: 1 }, 403],
    ["allow false with status 200", { ...ALLOW, allow: false }, 403],
  ];
  it.each(malformed)("%s: denied", async (_name, decision, status) => {
    const answer = await setup({ answer: () => decision }).ask(user());
    expect(answer.allow).toBe(false);
    expect(answer.status).toBe(status);
  });
});
