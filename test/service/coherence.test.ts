/**
 * Issue 17 item 1: every decision uses roles resolved with the role names of the very bundle that evaluates
 * it. Bundle B adds the alias "Prof racecar" to enseignant_jeune and 21 of 31 directory records use it;
 * swapping A -> B -> A (a rename over --bundle) must take the role away again under A, even though A's names
 * leave 68% of the records unresolvable (reported, not refused), and even when the directory file cannot
 * be read at the swap. Within one decision, engine and names come from one snapshot.
 * Item 2: a directory rewritten in place line by line is never served half-written.
 */
import { afterEach, describe, expect, it } from "vitest";
import { appendFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { entryRoles, roleResolver, type DirectoryEntry } from "../../src/directory/index.js";
import type { DecisionEngine, DecisionInput } from "../../src/engine/types.js";
import { createDecide } from "../../src/service/decide/decide.js";
import { loadConfig } from "../../src/service/config.js";
import { startService, type RunningService } from "../../src/service/start-service.js";
import { bundleWithData } from "./bundles.js";
import { ISSUER, TEACHER, TENANT_A, makeKeys, tempDir, userToken, writeDirectory } from "./helpers.js";
import { sealNdjson } from "../support/directory-files.js";
import { injector } from "./inject.js";
import { ALLOW } from "../support/policy-snapshot.js";

const ALIAS = "Prof racecar";
const PATH = "/v2/ORG001/elevesJeunes";
const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const done of cleanup.splice(0)) await done();
});

type Role = { id: string; aliases: string[] };
const bundleA = () => bundleWithData("A", () => undefined);
const bundleB = () =>
  bundleWithData("B", (data: { catalog: { roles: Role[] } }) =>
    data.catalog.roles.find((r) => r.id === "enseignant_jeune")!.aliases.push(ALIAS),
  );

/** 31 records: TEACHER and 20 others by the alias, 10 by the label every bundle knows. */
function records() {
  const sub = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;
  return [
    { sub: TEACHER, tenant_id: TENANT_A, roles: [ALIAS] },
    ...Array.from({ length: 20 }, (_, i) => ({ sub: sub(i), tenant_id: TENANT_A, roles: [ALIAS] })),
    ...Array.from({ length: 10 }, (_, i) => ({ sub: sub(100 + i), tenant_id: TENANT_A, roles: ["Enseignant jeune"] })),
  ];
}

async function serviceOn(first: Buffer) {
  const keys = await makeKeys();
  const dir = tempDir();
  const bundle = join(dir, "bundle.tar.gz");
  writeFileSync(join(dir, "jwks.json"), JSON.stringify(keys.jwks));
  writeFileSync(bundle, first);
  const directory = writeDirectory(dir, records());
  const warnings: Record<string, unknown>[] = [];
  const logger = pino(
    { level: "warn" },
    { write: (line: string) => void warnings.push(JSON.parse(line) as Record<string, unknown>) },
  );
  const config = loadConfig([
    "--issuer",
    ISSUER,
    "--jwks",
    join(dir, "jwks.json"),
    "--bundle",
    bundle,
    "--directory",
    directory,
    "--no-watch",
    "--log-level",
    "silent",
    "--host",
    "127.0.0.1",
    "--port",
    "0",
  ]);
  const svc: RunningService = await startService(config, { logger, listen: false });
  cleanup.push(() => svc.close());
  const token = await userToken(keys, TEACHER);
  /** mv a new bundle over --bundle, as a deploy does, and reload it. */
  const swapTo = async (bytes: Buffer) => {
    writeFileSync(`${bundle}.new`, bytes);
    renameSync(`${bundle}.new`, bundle);
    expect(await svc.policy.reload()).toBe(true);
  };
  const ask = () => svc.decide({ method: "GET", path: PATH, token }, "test");
  return { svc, swapTo, ask, directory, warnings };
}

const allowed = { allow: true, subject: { sub: TEACHER, roles: ["enseignant_jeune"] } };
// The record is not synced under a bundle that does not know its names: no role, so the role check denies.
const denied = { allow: false, reason: "role_not_allowed", subject: { sub: TEACHER, roles: [] } };

describe("a bundle swap changes the names every decision resolves with, whatever the directory does", () => {
  it(
    "A -> B -> A: the alias grants the role under B and no longer under A, though A leaves 21 of 31 records " +
      "unresolved",
    async () => {
      const { svc, swapTo, ask, warnings } = await serviceOn(await bundleA());
      expect(await ask()).toMatchObject(denied);
      await swapTo(await bundleB());
      expect(svc.policy.status().revision).toBe("B");
      expect(await ask()).toMatchObject(allowed);
      expect(svc.directory?.status()).toMatchObject({ size: 31, rolesUnresolved: 0 });

      await swapTo(await bundleA());
      expect(svc.policy.status().revision).toBe("A");
      expect(await ask()).toMatchObject(denied);
      // The bundle went live (a policy change is authoritative); the unresolvable share is reported.
      const status = svc.directory?.status();
      expect(status).toMatchObject({ size: 31, rolesUnresolved: 21 });
      expect(status?.lastError).toBeUndefined();
      expect(status?.rolesProblem).toBe(
        "21 of 31 records (68%) name a role that bundle A does not know; those users are not synced",
      );
      expect(warnings.filter((w) => w.event === "directory_roles_unresolved").at(-1)).toMatchObject({
        revision: "A",
        records: 31,
        unresolved: 21,
        share: "68%",
        examples: ['["Prof racecar"]: 21'],
      });
      const ready = (await (await injector(svc).fetch("/ready")).json()) as {
        ready: boolean;
        problems: string[];
        directory: { rolesUnresolved: number };
      };
      expect(ready).toMatchObject({ ready: true, directory: { rolesUnresolved: 21 } });
      expect(ready.problems).toContain(
        "directory: 21 of 31 records (68%) name a role that bundle A does not know; those users are not synced",
      );
    },
  );

  it(
    "B -> A -> B: removing the alias revokes it, adding it back grants it again (the unchanged file is never " +
      "re-read)",
    async () => {
      const { svc, swapTo, ask } = await serviceOn(await bundleB());
      expect(await ask()).toMatchObject(allowed);
      await swapTo(await bundleA());
      expect(await ask()).toMatchObject(denied);
      await swapTo(await bundleB());
      expect(await ask()).toMatchObject(allowed);
      expect(svc.directory?.status()).toMatchObject({ reloads: 0, rolesUnresolved: 0 });
      expect(svc.directory?.status().rolesProblem).toBeUndefined();
    },
  );

  it("a swap while the directory file cannot be read: the new names apply to the index in memory", async () => {
    const { svc, swapTo, ask, directory } = await serviceOn(await bundleB());
    expect(await ask()).toMatchObject(allowed);
    renameSync(directory, `${directory}.away`);
    await swapTo(await bundleA());
    expect(await ask()).toMatchObject(denied);
    expect(await svc.directory?.reload()).toBe(false);
    expect(await ask()).toMatchObject(denied);
    await swapTo(await bundleB());
    expect(await ask()).toMatchObject(allowed);
  });
});

describe("one decision, one snapshot", () => {
  it(
    "the engine that evaluates and the names that " + "resolve the roles come from the same read of the live bundle",
    async () => {
      // Two bundles: X knows "Prof racecar" as enseignant_jeune, Y as directeur_jeune. Each engine records what it
      // evaluated.
      const evaluated: { engine: string; roles: string[] }[] = [];
      const engineNamed = (name: string): DecisionEngine => ({
        revision: name,
        roles: [],
        decide: (input: DecisionInput) => (evaluated.push({ engine: name, roles: input.roles }), ALLOW),
      });
      const snapshot = (name: string, id: string) => {
        const resolveRole = roleResolver([{ id, label: id, aliases: [ALIAS] }]);
        return { engine: engineNamed(name), resolveRole, rolesOf: entryRoles(resolveRole) };
      };
      const X = snapshot("X", "enseignant_jeune");
      const Y = snapshot("Y", "directeur_jeune");
      // A holder swapped between every two reads: a decision that read it twice would mix X and Y.
      let reads = 0;
      const policy = {
        get current() {
          return reads++ % 2 === 0 ? X : Y;
        },
        get engine() {
          return reads++ % 2 === 0 ? X.engine : Y.engine;
        },
      };
      const entry: DirectoryEntry = { tenant_id: TENANT_A, names: [ALIAS] };
      const verifier = {
        verify: async (token: string) => ({
          claims: JSON.parse(token) as Record<string, unknown>,
          header: {},
          cached: false,
        }),
      };
      const decide = createDecide({
        verifier,
        policy,
        directory: { lookup: () => entry },
        rolesClaim: undefined,
        roleCheck: "enforce",
        logger: pino({ level: "silent" }),
        metrics: undefined,
      });
      const token = JSON.stringify({ sub: TEACHER, client_id: "web", tenant_id: TENANT_A });
      for (let i = 0; i < 6; i++) await decide({ method: "GET", path: PATH, token }, "test");
      expect(evaluated.length).toBe(6);
      for (const e of evaluated)
        expect(e).toEqual(
          e.engine === "X" ? { engine: "X", roles: ["enseignant_jeune"] } : { engine: "Y", roles: ["directeur_jeune"] },
        );
    },
  );
});

describe("a directory written in place, line by line, is never read half-written (issue 17 item 2)", () => {
  it(
    "the new file gives S enseignant_jeune on line 2 and " + "takes it back on line 19: S is never allowed at any step",
    async () => {
      const other = (i: number) =>
        JSON.stringify({
          sub: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
          tenant_id: TENANT_A,
          roles: ["Enseignant jeune"],
        });
      const noRole = JSON.stringify({ sub: TEACHER, tenant_id: TENANT_A, roles: [] });
      const oldLines = [noRole, ...Array.from({ length: 19 }, (_, i) => other(i))];
      const newLines = [
        other(100),
        JSON.stringify({ sub: TEACHER, tenant_id: TENANT_A, roles: ["enseignant_jeune"] }),
        ...Array.from({ length: 16 }, (_, i) => other(101 + i)),
        noRole,
        other(117),
      ];

      const keys = await makeKeys();
      const dir = tempDir();
      writeFileSync(join(dir, "jwks.json"), JSON.stringify(keys.jwks));
      writeFileSync(join(dir, "bundle.tar.gz"), await bundleA());
      const file = join(dir, "users.ndjson");
      writeFileSync(file, sealNdjson(oldLines));
      const config = loadConfig([
        "--issuer",
        ISSUER,
        "--jwks",
        join(dir, "jwks.json"),
        "--bundle",
        join(dir, "bundle.tar.gz"),
        "--directory",
        file,
        "--no-watch",
        "--log-level",
        "silent",
      ]);
      const svc = await startService(config, { logger: pino({ level: "silent" }), listen: false });
      cleanup.push(() => svc.close());
      const token = await userToken(keys, TEACHER);
      const ask = () => svc.decide({ method: "GET", path: PATH, token }, "test");
      expect(await ask()).toMatchObject({ allow: false, subject: { roles: [] } });

      // The writer truncates and appends one line at a time; the loader is offered every state it leaves.
      const sealed = sealNdjson(newLines);
      const steps = sealed.split(/(?<=\n)/);
      writeFileSync(file, "");
      const offered: boolean[] = [await svc.directory!.reload()];
      expect(await ask()).toMatchObject({ allow: false });
      for (const line of steps) {
        appendFileSync(file, line);
        offered.push(await svc.directory!.reload());
        expect((await ask()).allow, `after ${offered.length - 1} lines`).toBe(false);
      }
      // Only the complete file was accepted: the last step (its end record).
      expect(offered).toEqual([...Array.from({ length: steps.length }, () => false), true]);
      expect(svc.directory!.status().size).toBe(19);
      expect(svc.directory!.status().lastError).toBeUndefined();
    },
  );
});
