/**
 * A policy project: one folder holding a team's data/ (routes.json, roles.json, optionally tenants.json and
 * project.json, and data/sample/ with its directory and users), optionally policies/ (its own policy tests, or
 * a whole policy set of its own) and portier.json (its service configuration). Every command finds it the same
 * way: `--project DIR`, else the current folder when it is a project, else Portier's own folder (the spec's
 * project). The policies a project is built and tested with are its own when its policies/ holds a policy
 * module, else Portier's shared policies plus the project's tests; the spec's oracle
 * (policies/portier/spec_table_test.rego) belongs to the spec's project and runs with it only.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { PortierError } from "../errors/portier-error.js";
import { PROJECT_ROOT } from "./project-root.js";

export class ProjectError extends PortierError {
  static override readonly code = "project_invalid";
}

/** Tests in Portier's folder that check the spec's own data (its oracles), not the shared policies: its alone. */
const SPEC_PROJECT_TESTS = [join("portier", "spec_table_test.rego"), join("portier", "spec_tenants_test.rego")];

export interface Project {
  dir: string;
  /** Portier's own folder: the spec's project. */
  isPortier: boolean;
  /** The folder of Rego to build with (its tests are left out by opa's ignore list). */
  policyDir: string;
  /** What `opa test` loads: the policies and every test that belongs with this project. */
  testRoots: string[];
  /** The project's service configuration (portier.json), when it has one. */
  serviceConfig?: string;
}

/** Whether a folder is a policy project: it holds data/routes.json. */
export function isProject(dir: string): boolean {
  return existsSync(join(dir, "data", "routes.json"));
}

/** The .rego files under a folder, sorted (none when it does not exist). */
export function regoFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out.push(...regoFiles(full));
    else if (name.endsWith(".rego")) out.push(full);
  }
  return out;
}

/** The project named by --project, else the current folder when it is one, else Portier's (the spec's). */
export function resolveProject(option?: string, cwd: string = process.cwd()): Project {
  const dir = option !== undefined ? resolve(cwd, option) : isProject(cwd) ? resolve(cwd) : PROJECT_ROOT;
  if (!isProject(dir))
    throw new ProjectError(
      existsSync(dir)
        ? `${dir} is not a policy project: it has no data/routes.json (portier init ${option ?? dir} makes one)`
        : `not found: ${dir} (portier init ${option ?? dir} makes a project there)`,
    );
  return projectAt(dir);
}

export function projectAt(dir: string): Project {
  const isPortier = resolve(dir) === PROJECT_ROOT;
  const own = join(dir, "policies");
  const config = join(dir, "portier.json");
  const serviceConfig = existsSync(config) ? config : undefined;
  const ownModules = regoFiles(own).filter((f) => !f.endsWith("_test.rego"));
  if (isPortier || ownModules.length > 0)
    return { dir, isPortier, policyDir: own, testRoots: [own], ...(serviceConfig ? { serviceConfig } : {}) };
  const shared = join(PROJECT_ROOT, "policies");
  const spec = new Set(SPEC_PROJECT_TESTS.map((f) => join(shared, f)));
  const sharedFiles = regoFiles(shared).filter((f) => !spec.has(f));
  return {
    dir,
    isPortier,
    policyDir: shared,
    testRoots: [...sharedFiles, ...(existsSync(own) ? [own] : [])],
    ...(serviceConfig ? { serviceConfig } : {}),
  };
}
