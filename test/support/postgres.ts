/**
 * Test support: a PostgreSQL cluster of the test's own, from Debian's `postgresql` package (initdb and pg_ctl in
 * /usr/lib/postgresql/<version>/bin), in a temp folder, on a loopback port, trust authentication. As root (CI), the
 * server runs as the `postgres` user (PostgreSQL refuses root). Stopped by pg_ctl, and by its pid at the end.
 * `available` is false when the package is not installed (the tests then say they skipped).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./free-port.js";

function binFolder(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  for (const v of versions) if (existsSync(join(root, v, "bin", "initdb"))) return join(root, v, "bin");
  return undefined;
}

const BIN = binFolder();
const asRoot = process.getuid?.() === 0;
export const postgresAvailable = BIN !== undefined;

export interface TestPostgres {
  url: string;
  port: number;
  start(): void;
  stop(): void;
  /** Stops the server and deletes its folder. */
  destroy(): void;
}

function run(cmd: string, args: string[]): void {
  const [file, argv] = asRoot ? ["runuser", ["-u", "postgres", "--", cmd, ...args]] : [cmd, args];
  const r = spawnSync(file, argv, { encoding: "utf8", timeout: 60_000 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")}: ${r.stderr || r.stdout}`);
}

export async function startPostgres(): Promise<TestPostgres> {
  if (!BIN) throw new Error("PostgreSQL is not installed (apt-get install postgresql)");
  // As root, in /tmp itself: the tests' own temp root is private to root, and the server runs as postgres.
  const dir = mkdtempSync(join(asRoot ? "/tmp" : tmpdir(), "portier-pg-"));
  chmodSync(dir, 0o777);
  if (asRoot) execFileSync("chown", ["postgres:postgres", dir]);
  const data = join(dir, "data");
  const port = await freePort();
  run(join(BIN, "initdb"), ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]);
  const pgCtl = join(BIN, "pg_ctl");
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const start = () => run(pgCtl, ["-D", data, "-o", options, "-l", join(dir, "log"), "-w", "-t", "30", "start"]);
  const pid = () => {
    try {
      return Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]);
    } catch {
      return undefined;
    }
  };
  const stop = () => {
    const p = pid();
    if (p === undefined) return;
    try {
      run(pgCtl, ["-D", data, "-m", "fast", "-w", "-t", "30", "stop"]);
    } catch {
      process.kill(p, "SIGKILL");
    }
  };
  start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start,
    stop,
    destroy() {
      stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
