/**
 * Role names come from the loaded bundle's catalog, never from data/roles.json on disk: a bundle that adds
 * an alias activates the alias with its policy (claims and directory records, re-resolved before the swap),
 * a bundle whose catalog gives one name to two roles is refused, and the --roles option is gone.
 */
import { afterEach, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { Directory } from "../../src/directory/index.js";
import { loadConfig, ConfigError } from "../../src/service/config.js";
import { PolicyHolder } from "../../src/service/policy.js";
import { startService, type RunningService } from "../../src/service/start-service.js";
import { bundleWithData } from "./bundles.js";
import { ISSUER, TEACHER, TENANT_A, makeKeys, tempDir, userToken, writeDirectory } from "./helpers.js";

const ALIAS = "Professeur des écoles";
const logger = pino({ level: "silent" });
const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const done of cleanup.splice(0)) await done();
});

type Role = { id: string; aliases: string[] };
const withAlias = (id: string, alias: string) => (data: { catalog: { roles: Role[] } }) =>
  data.catalog.roles.find((r) => r.id === id)!.aliases.push(alias);

/** A holder over a bundle file the test rewrites; load() writes a bundle there and reloads. */
/** The live bundle's resolver for a role name (undefined: no name resolves before a bundle is loaded). */
const resolveNow = (policy: PolicyHolder, name: string) => policy.current?.resolveRole(name);

function holder() {
  const file = join(tempDir(), "bundle.tar.gz");
  const policy = new PolicyHolder(logger, { file, watch: false }, 64 * 1024 * 1024);
  cleanup.push(() => policy.close());
  const load = (bytes: Buffer) => (writeFileSync(file, bytes), policy.reload());
  return { policy, load };
}

/** The directory's record for `sub` as the live bundle resolves it: its role ids, or "-" when not synced. */
async function holderWithDirectory(records: unknown[]) {
  const { policy, load } = holder();
  expect(await load(await bundleWithData("base", () => undefined))).toBe(true);
  const directory = await Directory.open(writeDirectory(tempDir(), records), { watch: false });
  cleanup.push(() => directory.close());
  const rolesNow = (sub: string) => {
    const entry = directory.lookup(sub);
    const snapshot = policy.current;
    return `${snapshot?.engine.revision}:${(entry && snapshot?.rolesOf(entry)?.join()) ?? "-"}`;
  };
  return { policy, directory, load, rolesNow };
}

describe("PolicyHolder: role names go live with the bundle", () => {
  it(
    "a bundle adding an alias resolves it in claims and in directory records from its first decision; removing it " +
      "undoes both",
    async () => {
      const { policy, load, rolesNow } = await holderWithDirectory([
        { sub: TEACHER, tenant_id: TENANT_A, roles: [ALIAS] },
      ]);
      expect(resolveNow(policy, ALIAS)).toBeUndefined();
      expect(rolesNow(TEACHER)).toBe("base:-");

      // Watch every turn of the event loop during the reload: the new engine is never live without its names.
      const seen: string[] = [];
      const watcher = setInterval(() => seen.push(rolesNow(TEACHER)), 0);
      const checkAtSwap: string[] = [];
      policy.onActivate = () => checkAtSwap.push(rolesNow(TEACHER));
      expect(await load(await bundleWithData("alias", withAlias("enseignant_jeune", ALIAS)))).toBe(true);
      clearInterval(watcher);
      expect(checkAtSwap).toEqual(["alias:enseignant_jeune"]);
      expect(seen.filter((s) => s.startsWith("alias:") && s !== "alias:enseignant_jeune")).toEqual([]);
      expect(resolveNow(policy, ALIAS)).toBe("enseignant_jeune");
      expect(resolveNow(policy, ALIAS.toUpperCase())).toBe("enseignant_jeune");

      expect(await load(await bundleWithData("plain", () => undefined))).toBe(true);
      expect(resolveNow(policy, ALIAS)).toBeUndefined();
      expect(rolesNow(TEACHER)).toBe("plain:-");
    },
  );

  it(
    'refuses a bundle whose catalog gives "ENSEIGNANT JEUNE" to directeur_jeune; the old policy and names keep ' +
      "serving",
    async () => {
      const { policy, load, rolesNow } = await holderWithDirectory([
        { sub: TEACHER, tenant_id: TENANT_A, roles: ["Enseignant jeune"] },
      ]);
      const before = policy.current;
      expect(await load(await bundleWithData("clash", withAlias("directeur_jeune", "ENSEIGNANT JEUNE")))).toBe(false);
      expect(policy.status().lastError).toMatch(
        new RegExp(
          String.raw`bundle\.tar\.gz:\/data\.json: catalog\.roles\[1\]\.aliases\[0\]: "ENSEIGNANT JEUNE" of ` +
            String.raw`role directeur_jeune ` +
            String.raw`matches catalog\.roles\[0\]\.label "Enseignant jeune" of role enseignant_jeune`,
        ),
      );
      expect(policy.current).toBe(before);
      expect(resolveNow(policy, "Enseignant jeune")).toBe("enseignant_jeune");
      expect(rolesNow(TEACHER)).toBe("base:enseignant_jeune");
    },
  );

  it("refuses a bundle without a role catalog", async () => {
    const { policy, load } = holder();
    expect(
      await load(await bundleWithData("none", (d: { catalog: object }) => Reflect.deleteProperty(d.catalog, "roles"))),
    ).toBe(false);
    expect(policy.status().lastError).toContain("bundle.tar.gz:/data.json: catalog.roles must list the role catalog");
  });
});

describe("startService: names from the bundle, not from data/roles.json", () => {
  async function start(
    bundle: Buffer,
    extra: Record<string, unknown>,
  ): Promise<{ svc: RunningService; dir: string; keys: Awaited<ReturnType<typeof makeKeys>> }> {
    const keys = await makeKeys();
    const dir = tempDir();
    writeFileSync(join(dir, "jwks.json"), JSON.stringify(keys.jwks));
    writeFileSync(join(dir, "bundle.tar.gz"), bundle);
    const config = loadConfig([
      "--issuer",
      ISSUER,
      "--jwks",
      join(dir, "jwks.json"),
      "--bundle",
      join(dir, "bundle.tar.gz"),
      "--no-watch",
      "--log-level",
      "silent",
      "--no-directory",
    ]);
    // The case's own source of roles (directory or claim) replaces --no-directory.
    const svc = await startService({ ...config, noDirectory: false, ...extra }, { logger, listen: false });
    cleanup.push(() => svc.close());
    return { svc, dir, keys };
  }

  it("a directory record named by a bundle-only alias is synced with that role, and a roles claim too", async () => {
    const dir = tempDir();
    const directory = writeDirectory(dir, [{ sub: TEACHER, tenant_id: TENANT_A, roles: [ALIAS] }]);
    const { svc, keys } = await start(await bundleWithData("alias", withAlias("enseignant_jeune", ALIAS)), {
      directory,
    });
    const answer = await svc.decide(
      { method: "GET", path: "/v1/roles", token: await userToken(keys, TEACHER) },
      "test",
    );
    expect(answer).toMatchObject({ allow: true, subject: { roles: ["enseignant_jeune"] } });

    const claims = await start(await bundleWithData("alias", withAlias("enseignant_jeune", ALIAS)), {
      rolesClaim: "roles",
    });
    const byClaim = await claims.svc.decide(
      {
        method: "GET",
        path: "/v1/roles",
        token: await userToken(claims.keys, TEACHER, { roles: `${ALIAS}, Directeur adulte` }),
      },
      "test",
    );
    expect(byClaim.subject?.roles).toEqual(["enseignant_jeune", "directeur_adulte"]);
  });

  it("a reloaded bundle re-resolves the service's directory", async () => {
    const directory = writeDirectory(tempDir(), [{ sub: TEACHER, tenant_id: TENANT_A, roles: [ALIAS] }]);
    const { svc, keys, dir } = await start(await bundleWithData("plain", () => undefined), {
      directory,
      allowDirectoryShrink: true,
    });
    const ask = async () =>
      svc.decide({ method: "GET", path: "/v1/roles", token: await userToken(keys, TEACHER) }, "test");
    expect(await ask()).toMatchObject({ allow: false, reason: "not_synced" });
    writeFileSync(join(dir, "bundle.tar.gz"), await bundleWithData("alias", withAlias("enseignant_jeune", ALIAS)));
    expect(await svc.policy.reload()).toBe(true);
    expect(await ask()).toMatchObject({ allow: true, subject: { roles: ["enseignant_jeune"] } });
  });

  it("--roles is no longer an option", () => {
    expect(() => loadConfig(["--issuer", ISSUER, "--roles", "data/roles.json"])).toThrow(ConfigError);
  });
});
