/**
 * The directory's guards in the service count what a decision will see: the records whose role names resolve
 * under the live bundle. A file whose every record names only unknown roles is a start-up failure (the service
 * never becomes ready); a reload keeping 4 valid records and turning 6 into unknown-role records is refused and
 * /ready says so; /ready and /metrics report how many records name unknown roles, counted afresh at each reload.
 */
import { afterEach, describe, expect, it } from "vitest";
import { renameSync, writeFileSync } from "node:fs";
import { TEACHER, TENANT_A, makeKeys, runServe, sampleServeArgs } from "./helpers.js";
import { serveInjected, type InjectedService } from "./inject.js";
import { metricValue } from "../support/metrics.js";

const running: InjectedService[] = [];
afterEach(async () => {
  for (const svc of running.splice(0)) await svc.stop();
});

const valid = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    sub: i === 0 ? TEACHER : `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
    tenant_id: TENANT_A,
    roles: ["Enseignant jeune"],
  }));
const unknownRole = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    sub: `00000000-0000-4000-9000-${String(i).padStart(12, "0")}`,
    tenant_id: TENANT_A,
    roles: ["Astronaute"],
  }));

/** The directory file of `serve ARGS` (the value after --directory). */
const directoryOf = (args: string[]) => args[args.indexOf("--directory") + 1]!;

/** Writes as feeds should: a temp file renamed over the old one. */
function replace(file: string, records: unknown[]): void {
  writeFileSync(`${file}.tmp`, JSON.stringify(records));
  renameSync(`${file}.tmp`, file);
}

interface Ready {
  ready: boolean;
  problems: string[];
  directory: { size: number; rolesUnresolved: number; rolesBundle: string; lastError?: string };
}
const readyOf = async (svc: InjectedService) => {
  const res = await svc.fetch("/ready");
  return { status: res.status, body: (await res.json()) as Ready };
};

async function serve(records: unknown[]) {
  const args = [...sampleServeArgs(await makeKeys(), records), "--no-watch"];
  const svc = await serveInjected(args);
  running.push(svc);
  return { svc, file: directoryOf(args) };
}

describe("at start", () => {
  it("a directory whose every record names only unknown roles is refused: the service does not start", async () => {
    const args = sampleServeArgs(await makeKeys(), unknownRole(3));
    await expect(serveInjected(args)).rejects.toThrow(
      /^config\.directory: refused: all 3 records name a role that bundle \S+ does not know; no user would be synced/,
    );
  });

  it("portier serve prints it as one line and exits 2", async () => {
    const args = sampleServeArgs(await makeKeys(), [...unknownRole(2)]);
    const r = await runServe([...args, "--port", "0", "--workers", "1", "--no-watch"]);
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/config\.directory: refused: all 2 records name a role that bundle \S+ does not know/);
  });

  it("a directory with some unknown-role records starts; /ready and /metrics count them", async () => {
    const { svc } = await serve([...valid(3), ...unknownRole(1)]);
    const { status, body } = await readyOf(svc);
    expect(status).toBe(200);
    expect(body.directory).toMatchObject({ size: 4, rolesUnresolved: 1 });
    expect(body.directory.rolesBundle).toBe(svc.service.policy.status().revision);
    const metrics = await (await svc.fetch("/metrics")).text();
    expect(metricValue(metrics, "portier_directory_roles_unresolved")).toBe(1);
  });
});

describe("on reload", () => {
  it("keeping 4 valid records and turning 6 into unknown-role records is refused; the old index serves", async () => {
    const { svc, file } = await serve(valid(10));
    replace(file, [...valid(4), ...unknownRole(6)]);
    expect(await svc.service.directory!.reload()).toBe(false);
    const { status, body } = await readyOf(svc);
    // Still ready: the old index keeps serving, and the refusal is listed.
    expect(status).toBe(200);
    expect(body.directory).toMatchObject({ size: 10, rolesUnresolved: 0 });
    expect(body.problems).toEqual([
      expect.stringMatching(
        new RegExp(
          "^directory: last reload refused, previous index keeps serving: refused: the reload drops 60% of the " +
            "records \\(10 -> 4; 6 of the file's 10 records name a role that bundle \\S+ does not know\\)",
        ),
      ),
    ]);
  });

  it("the unknown-role count in /ready and /metrics is taken afresh from each reloaded index", async () => {
    const { svc, file } = await serve([...valid(6), ...unknownRole(3)]);
    expect((await readyOf(svc)).body.directory.rolesUnresolved).toBe(3);
    replace(file, [...valid(6), ...unknownRole(1)]);
    expect(await svc.service.directory!.reload()).toBe(true);
    expect((await readyOf(svc)).body.directory).toMatchObject({ size: 7, rolesUnresolved: 1 });
    replace(file, [...valid(6), ...unknownRole(2)]);
    expect(await svc.service.directory!.reload()).toBe(true);
    expect((await readyOf(svc)).body.directory).toMatchObject({ size: 8, rolesUnresolved: 2 });
    const metrics = await (await svc.fetch("/metrics")).text();
    expect(metricValue(metrics, "portier_directory_roles_unresolved")).toBe(2);
  });
});
