/**
 * The role catalog an engine exposes (data.catalog.roles of its bundle), and the refusal of a bundle whose catalog is
 * missing or malformed, naming file and field.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadCatalog } from "../../src/catalog/index.js";
import { EngineLoadError, loadEngine } from "../../src/engine/index.js";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { bundleWithData } from "../service/bundles.js";

const DATA_ROLES = loadCatalog(join(PROJECT_ROOT, "data")).roles;

describe("engine.roles", () => {
  it("is the bundle's role catalog", async () => {
    const engine = await loadEngine(
      await bundleWithData("r", (d: Data) => d.catalog.roles[0]!.aliases.push("Professeur")),
    );
    expect(engine.roles[0]).toEqual({ ...DATA_ROLES[0], aliases: ["Professeur"] });
    expect(engine.roles.slice(1)).toEqual(DATA_ROLES.slice(1));
  });

  /** The data document as the edits below see it: each edit breaks it on purpose (a label removed, a number). */
  type Data = { catalog: { roles: { label?: string; aliases: unknown[] }[] } };
  type Edit = (data: Data) => void;
  const broken: [string, Edit, RegExp][] = [
    [
      "has no catalog.roles",
      (d) => Reflect.deleteProperty(d.catalog, "roles"),
      /catalog\.roles must list the role catalog/,
    ],
    [
      "has a role without a label",
      (d) => delete d.catalog.roles[2]!.label,
      /catalog\.roles\[2\]: id and label must be strings/,
    ],
    [
      "has aliases that are not strings",
      (d) => (d.catalog.roles[4]!.aliases = ["x", 7]),
      /catalog\.roles\[4\]\.aliases must be a list of strings/,
    ],
  ];
  it.each(broken)("refuses a bundle whose data %s", async (_name, edit, message) => {
    const err = await loadEngine(await bundleWithData("r", edit), { source: "b.tar.gz" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineLoadError);
    expect((err as Error).message).toMatch(/^b\.tar\.gz:\/data\.json: /);
    expect((err as Error).message).toMatch(message);
  });
});
