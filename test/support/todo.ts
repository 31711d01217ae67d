/**
 * Test support: the Todo fixture (test/fixtures/todo/data: an API with writes, one route entry per method; roles
 * viewer, editor, admin) as a project, its compiled bundle, and directory records holding each of its roles.
 */
import { cpSync } from "node:fs";
import { join } from "node:path";
import { buildBundle } from "../../src/toolchain/build-bundle.js";
import { opaPath } from "../../src/toolchain/opa.js";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { scratchProject } from "./cli.js";
import { TENANT_A } from "./sample.js";

/** The project's policies/ and data/ (schemas, sample) with the fixture's routes, roles, tenants and choices. */
export function todoProject(): string {
  const dir = scratchProject();
  for (const file of ["roles.json", "routes.json", "tenants.json", "project.json"])
    cpSync(join(PROJECT_ROOT, "test", "fixtures", "todo", "data", file), join(dir, "data", file));
  return dir;
}

/** Builds the fixture's bundle (about a second with opa) and answers its path. */
export async function buildTodoBundle(): Promise<string> {
  const dir = todoProject();
  const out = join(dir, "build", "bundle.tar.gz");
  await buildBundle({ opa: opaPath(), projectDir: dir, workDir: join(dir, "build"), out });
  return out;
}

/** A user of each fixture role, and a synced user without a role, all of TENANT_A. */
export const TODO_USERS = {
  viewer: "a1111111-1111-4111-8111-111111111111",
  editor: "a2222222-2222-4222-8222-222222222222",
  admin: "a3333333-3333-4333-8333-333333333333",
  synced: "a4444444-4444-4444-8444-444444444444",
} as const;

export const TODO_RECORDS = Object.entries(TODO_USERS).map(([role, sub]) => ({
  sub,
  tenant_id: TENANT_A,
  roles: role === "synced" ? [] : [role],
}));
