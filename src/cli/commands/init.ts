/**
 * `portier init DIR`: scaffolds a policy project that builds, tests and serves at once: data/ (a small route
 * table, its roles, the project's choices), data/sample/ (a synced-users directory and the local issuer's users),
 * portier.json (what `portier serve --project DIR` needs), policies/routes_test.rego (a table test generated
 * from the project's own data), then builds DIR/build/bundle.tar.gz. Refuses a folder that already holds a
 * project. `portier init --tests DIR` rewrites only the generated test, from the data as it is now.
 */
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { loadCatalog } from "../../catalog/index.js";
import { buildBundle } from "../../toolchain/build-bundle.js";
import { GENERATED_TEST, generatedTests } from "../../toolchain/generate-tests.js";
import { opaPath, runOpa } from "../../toolchain/opa.js";
import { isProject } from "../../toolchain/project.js";
import { OPA_OPTION, parse, usageError, type CommandSpec } from "../args.js";
import { EXIT } from "../exit-codes.js";

export const SPEC = {
  name: "portier init",
  positionals: "DIR",
  summary:
    "Scaffolds a policy project in DIR (a new or empty folder): data/, data/sample/, portier.json and a table test\n" +
    "generated from its own data, then builds its bundle, so that `portier test --project DIR` and\n" +
    "`portier serve --project DIR` work at once. With --tests, rewrites only policies/routes_test.rego.",
  options: {
    tests: {
      type: "boolean",
      description: "rewrite only the generated test from DIR's data as it is now",
      default: "scaffold",
    },
    opa: OPA_OPTION,
  },
  exits: { ok: "the project was written and its bundle built (a folder that holds one already exits 2)" },
} as const satisfies CommandSpec;

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

/** The starting files of a project, by path: a read-only and a read-write role on a small API that reads and writes. */
function scaffold(): Record<string, string> {
  const tenant = randomUUID();
  const alice = randomUUID();
  const bob = randomUUID();
  const user = (sub: string, name: string, given: string, roles: string) => ({
    sub,
    preferred_username: name,
    password: "portier-dev",
    email: `${name}@example.test`,
    email_verified: true,
    given_name: given,
    family_name: "Example",
    name: `${given} Example`,
    tenant_id: tenant,
    idp: "local",
    amr: ["pwd"],
    description: `directory roles ${roles}`,
  });
  return {
    "portier.json": json({
      $comment: "portier serve --project DIR: the local issuer of portier dev, the sample directory.",
      issuer: "http://127.0.0.1:9400",
      directory: "data/sample/directory.json",
    }),
    "data/routes.json": json({
      $comment:
        "The API's routes and the roles allowed to call them (ids of roles.json). An entry without methods " +
        "answers GET (and HEAD); an entry with methods answers those, each method of a route in one entry.",
      routes: [
        { product: "Items", api: "Items", template: "/items", allowed: ["reader", "writer"] },
        { product: "Items", api: "New item", template: "/items", methods: ["POST"], allowed: ["writer"] },
        { product: "Items", api: "Item", template: "/items/{itemId}", allowed: ["reader", "writer"] },
        { product: "Items", api: "Item history", template: "/items/{itemId}/history", allowed: ["writer"] },
      ],
    }),
    "data/roles.json": json({
      $comment: "The roles of the API, by id; label and aliases are other names the directory may use.",
      roles: [
        { id: "reader", label: "Reader", aliases: [] },
        { id: "writer", label: "Writer", aliases: [] },
      ],
    }),
    "data/project.json": json({
      $comment: "This project's choices: see data/schemas/project.schema.json in Portier.",
      role_checked_flows: ["accessCode", "application"],
      claims: { subject: "sub", tenant: "tenant_id" },
      user_token: { claims: [], scope: null },
      application_token: { audience: "apiclients", scope: "apiclients" },
      tenant_binding: null,
      role_list: { name: "the role table of data/routes.json", deprecated: false },
    }),
    "data/sample/directory.json": json([
      { sub: alice, tenant_id: tenant, roles: ["reader"] },
      { sub: bob, tenant_id: tenant, roles: ["writer"] },
    ]),
    "data/sample/users.json": json({
      $comment: "Sample users of the local issuer (portier dev --project DIR). Development only: password portier-dev.",
      users: [user(alice, "alice", "Alice", "reader"), user(bob, "bob", "Bob", "writer")],
    }),
    ".gitignore": "build/\n",
  };
}

/** Writes the generated test, in `opa fmt` layout. */
async function writeTests(dir: string, opa: string): Promise<string> {
  const file = join(dir, GENERATED_TEST);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, generatedTests(loadCatalog(join(dir, "data"))));
  const formatted = await runOpa(opa, ["fmt", "-w", file]);
  if (formatted.code !== 0) throw new Error(`opa fmt ${file}: ${(formatted.stderr || formatted.stdout).trim()}`);
  return file;
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, SPEC);
  if (positionals.length !== 1) throw usageError(SPEC, `expected the project folder DIR, got ${positionals.length}`);
  const dir = resolve(positionals[0]!);
  if (values.tests) {
    if (!isProject(dir)) throw usageError(SPEC, `--tests: ${dir} is not a policy project (no data/routes.json)`);
    console.log(`wrote ${await writeTests(dir, opaPath(values.opa))}`);
    return EXIT.ok;
  }
  if (isProject(dir))
    throw usageError(SPEC, `${dir} holds a project already (data/routes.json); --tests rewrites its test`);
  if (existsSync(dir) && readdirSync(dir).length > 0)
    throw usageError(SPEC, `${dir} is not empty: name a new or empty folder`);
  for (const [path, text] of Object.entries(scaffold())) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  const opa = opaPath(values.opa);
  await writeTests(dir, opa);
  const { revision } = await buildBundle({
    opa,
    projectDir: dir,
    workDir: join(dir, "build"),
    out: join(dir, "build", "bundle.tar.gz"),
  });
  console.log(
    [
      `project written: ${dir} (bundle ${revision})`,
      `  portier test --project ${positionals[0]}     the policy tests, its own table test among them`,
      `  portier dev --project ${positionals[0]}      the local issuer and the service with its sample users`,
      `  portier serve --project ${positionals[0]}    the decision service (portier.json)`,
    ].join("\n"),
  );
  return EXIT.ok;
}
