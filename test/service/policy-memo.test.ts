/**
 * The decision memo as the service wires it (--decision-memo-entries -> PolicyHolder -> each loaded
 * engine): on by default, off with 0, and a reloaded bundle revision starts with an empty memo and
 * decides with its own policy.
 */
import { afterEach, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import type { DecisionInput, InProcessEngine } from "../../src/engine/index.js";
import { loadConfig } from "../../src/service/config.js";
import { PolicyHolder } from "../../src/service/policy.js";
import { bundleWithData } from "./bundles.js";
import { TENANT_A } from "../support/sample.js";
import { ISSUER, tempDir } from "./helpers.js";

const logger = pino({ level: "silent" });
const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const done of cleanup.splice(0)) await done();
});

const TEMPLATE = "/v2/{codeOrganisme}/elevesJeunes/{idEleveJeune}/absences";
const input: DecisionInput = {
  method: "GET",
  path: "/v2/ORG001/elevesJeunes/J1/absences",
  token: { sub: "u1", auth_time: 1, idp: "local", scope: ["apiclients"], tenant_id: TENANT_A },
  roles: ["enseignant_jeune"],
  synced: true,
  role_check: "enforce",
};

async function holder(entries: number) {
  const file = join(tempDir(), "bundle.tar.gz");
  const counts = { hits: 0, misses: 0 };
  const policy = new PolicyHolder(logger, { file, watch: false }, 64 * 1024 * 1024, undefined, { entries, counts });
  cleanup.push(() => policy.close());
  const load = async (bytes: Buffer) => (writeFileSync(file, bytes), policy.reload());
  expect(await load(await bundleWithData("first", () => undefined))).toBe(true);
  return { policy, load, counts, engine: () => policy.engine as InProcessEngine };
}

describe("decision memo in the service", () => {
  it("is on by default and off with --decision-memo-entries 0", () => {
    const config = (...flags: string[]) => loadConfig(["--issuer", ISSUER, "--no-directory", ...flags], {});
    expect(config().decisionMemoEntries).toBe(10_000);
    expect(config("--decision-memo-entries", "0").decisionMemoEntries).toBe(0);
    expect(() => config("--decision-memo-entries=-1")).toThrow(/config\.decisionMemoEntries/);
  });

  it(
    "answers a repeated input from the memo; a reloaded " + "revision starts empty and decides with its own policy",
    async () => {
      const { load, engine, counts } = await holder(100);
      // Stored at its second miss, answered from the memo at the third call.
      for (let i = 0; i < 3; i++) expect(engine().decide(input)).toMatchObject({ allow: true });
      expect(counts).toEqual({ hits: 1, misses: 2 });
      const narrowed = await bundleWithData(
        "second",
        (d: { catalog: { routes: { template: string; allowed: string[] }[] } }) => {
          const route = d.catalog.routes.find((r) => r.template === TEMPLATE)!;
          route.allowed = route.allowed.filter((r) => r !== "enseignant_jeune");
        },
      );
      expect(await load(narrowed)).toBe(true);
      expect(engine().revision).toBe("second");
      // The new revision's memo is empty (a miss), and the process's tally goes on across the reload.
      expect(engine().decide(input)).toMatchObject({ allow: false, reason: "role_not_allowed" });
      expect(counts).toEqual({ hits: 1, misses: 3 });
    },
  );

  it("keeps no memo with 0 entries", async () => {
    const { engine, counts } = await holder(0);
    for (let i = 0; i < 3; i++) expect(engine().decide(input)).toMatchObject({ allow: true });
    expect(counts).toEqual({ hits: 0, misses: 0 });
  });
});
