/**
 * --scim-postgres-url: the fleet's store. Two tables: portier_scim_steps (every step, by revision) and
 * portier_scim_resources (the resources as they are now). A write takes a transaction-wide advisory lock, so
 * revisions are committed in order and a reader always sees a prefix of them; it first applies the steps this
 * process has not seen, then stores the step (its resources written or deleted in the same transaction) and
 * NOTIFYs its revision. Each replica loads a snapshot at start (resources and the revision, one REPEATABLE READ
 * transaction) and follows: LISTEN portier_scim, then the steps after its revision; after a lost connection it
 * reconnects with back-off and catches up from its revision; a periodic check of the head revision catches a
 * missed notification and measures the lag. While PostgreSQL is away, decisions go on with what is applied;
 * writes fail (503) and store nothing.
 */
import pg from "pg";
import type { Logger } from "pino";
import { messageOf } from "../../errors/caught.js";
import { backoffMs, redactUrls } from "../../reload/index.js";
import type { ScimResource } from "./resources.js";
import type { Change, Step } from "./scim-state.js";
import type { ScimStore, StoreStatus, WriteSlot } from "./store.js";

const CHANNEL = "portier_scim";
/** The advisory lock of the writers (an arbitrary constant: "portier scim"). */
const WRITE_LOCK = 0x5c1a0001;
const SNAPSHOT_BATCH = 10_000;
const CATCH_UP_BATCH = 1000;
/** Snapshot rows parsed and applied at once. */
const APPLY_CHUNK = 500;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS portier_scim_steps (
  rev bigint PRIMARY KEY,
  at timestamptz NOT NULL DEFAULT now(),
  changes jsonb NOT NULL
);
CREATE TABLE IF NOT EXISTS portier_scim_resources (
  type text NOT NULL,
  id text NOT NULL,
  rev bigint NOT NULL,
  resource jsonb NOT NULL,
  PRIMARY KEY (type, id)
);`;

export interface PostgresStoreOptions {
  logger?: Logger;
  /** Seconds between checks of the head revision (default 5). */
  checkSeconds?: number;
  /** Longest wait between reconnections (default 30 s). */
  maxBackoffMs?: number;
  connectTimeoutMs?: number;
}

export class PostgresStore implements ScimStore {
  private readonly pool: pg.Pool;
  private listener: pg.Client | undefined;
  private apply: ((step: Step) => void) | undefined;
  private applied = 0;
  /** The highest revision known to be committed (from NOTIFY, a check or a write). */
  private head = 0;
  private connected = false;
  private lastError: string | undefined;
  private lastContact: number | undefined;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  private catching: Promise<void> | undefined;
  private again = false;
  /** Lost or failed LISTEN connections in a row. */
  private failures = 0;
  private written = 0;

  constructor(
    private readonly url: string,
    private readonly o: PostgresStoreOptions = {},
  ) {
    this.pool = new pg.Pool({
      connectionString: url,
      max: 4,
      connectionTimeoutMillis: o.connectTimeoutMs ?? 5000,
      query_timeout: 30_000,
    });
    // An idle client's error (PostgreSQL restarted) must not end the process: the next query reconnects.
    this.pool.on("error", (err) => this.failed(err));
  }

  private failed(err: unknown): void {
    this.lastError = redactUrls(messageOf(err));
    this.connected = false;
  }

  private contact(): void {
    this.lastContact = Date.now();
    this.connected = true;
  }

  async load(apply: (step: Step) => void): Promise<void> {
    this.apply = (step) => {
      apply(step);
      if (step.rev > this.applied) this.applied = step.rev;
      if (step.rev > this.head) this.head = step.rev;
    };
    const client = await this.pool.connect();
    try {
      await client.query("SELECT pg_advisory_lock($1)", [WRITE_LOCK]);
      try {
        await client.query(SCHEMA);
      } finally {
        await client.query("SELECT pg_advisory_unlock($1)", [WRITE_LOCK]);
      }
      await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
      const { rows } = await client.query<{ rev: string }>(
        "SELECT coalesce(max(rev), 0)::text AS rev FROM portier_scim_steps",
      );
      const rev = Number(rows[0]!.rev);
      // Users before groups (a group's members are users or groups already held), each in the table's own order:
      // no sort of the whole table. The resource as text: parsed once here, and kept as that text.
      for (const type of ["User", "Group"] as const) {
        await client.query(
          `DECLARE snapshot_${type} NO SCROLL CURSOR FOR SELECT id, resource::text AS text ` +
            "FROM portier_scim_resources WHERE type = $1",
          [type],
        );
        // The next batch is asked for before this one is applied: PostgreSQL reads and sends it meanwhile.
        const fetch = () => {
          const asked = client.query<{ id: string; text: string }>(`FETCH ${SNAPSHOT_BATCH} FROM snapshot_${type}`);
          // Awaited below; a failure while a batch is being applied must not be an unhandled rejection.
          asked.catch(() => undefined);
          return asked;
        };
        for (let next = fetch(); ;) {
          const batch = await next;
          if (batch.rows.length === 0) break;
          next = fetch();
          // Applied in small steps: each one's parsed resources are garbage before the next young-generation
          // collection, instead of a whole batch of them surviving into the old generation (the peak RSS).
          for (let at = 0; at < batch.rows.length; at += APPLY_CHUNK) {
            const changes: Change[] = batch.rows.slice(at, at + APPLY_CHUNK).map((row) => ({
              type,
              id: row.id,
              resource: JSON.parse(row.text) as ScimResource,
              text: row.text,
            }));
            this.apply({ rev, changes, snapshot: true });
          }
        }
      }
      await client.query("COMMIT");
      this.applied = rev;
      this.head = rev;
      this.contact();
    } catch (err) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw new Error(`${redactUrls(this.url)}: ${redactUrls(messageOf(err))}`);
    } finally {
      client.release();
    }
  }

  follow(): void {
    void this.listen();
    const every = (this.o.checkSeconds ?? 5) * 1000;
    this.timer = setInterval(() => void this.check(), every);
    this.timer.unref();
  }

  /** LISTEN on a client of its own; on its loss, reconnect with back-off and catch up. */
  private async listen(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({
      connectionString: this.url,
      connectionTimeoutMillis: this.o.connectTimeoutMs ?? 5000,
    });
    const lost = (err?: unknown) => {
      if (this.listener !== client) return;
      this.listener = undefined;
      if (err) this.failed(err);
      else this.connected = false;
      client.end().catch(() => undefined);
      this.retry();
    };
    client.on("error", lost);
    client.on("end", () => lost());
    client.on("notification", (n) => {
      const rev = Number(n.payload);
      if (Number.isSafeInteger(rev) && rev > this.head) this.head = rev;
      void this.catchUp();
    });
    this.listener = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
      this.failures = 0;
      this.contact();
      this.lastError = undefined;
      await this.catchUp();
    } catch (err) {
      lost(err);
    }
  }

  private retry(): void {
    if (this.closed) return;
    const delay = backoffMs(++this.failures, { firstMs: 250, maxMs: this.o.maxBackoffMs ?? 30_000 });
    setTimeout(() => void this.listen(), delay).unref();
  }

  /** The head revision, and the steps after ours when there are any (a missed notification). */
  private async check(): Promise<void> {
    try {
      const { rows } = await this.pool.query<{ rev: string }>(
        "SELECT coalesce(max(rev), 0)::text AS rev FROM portier_scim_steps",
      );
      this.contact();
      const head = Number(rows[0]!.rev);
      if (head > this.head) this.head = head;
      if (this.head > this.applied) await this.catchUp();
    } catch (err) {
      this.failed(err);
    }
  }

  /** Applies every committed step after ours, in order (one run at a time; a call during a run queues one more). */
  catchUp(): Promise<void> {
    if (this.catching) {
      this.again = true;
      return this.catching;
    }
    const run = async () => {
      do {
        this.again = false;
        await this.fetchSteps(this.pool);
      } while (this.again && !this.closed);
    };
    this.catching = run()
      .catch((err: unknown) => this.failed(err))
      .finally(() => {
        this.catching = undefined;
      });
    return this.catching;
  }

  private async fetchSteps(db: pg.Pool | pg.PoolClient): Promise<void> {
    for (;;) {
      const { rows } = await db.query<{ rev: string; changes: Change[] }>(
        // By the column, a number: `ORDER BY rev` would name the text output column and put 10 before 9.
        "SELECT rev::text AS rev, changes FROM portier_scim_steps s WHERE s.rev > $1 ORDER BY s.rev LIMIT $2",
        [this.applied, CATCH_UP_BATCH],
      );
      this.contact();
      for (const row of rows) this.apply?.({ rev: Number(row.rev), changes: row.changes });
      if (rows.length < CATCH_UP_BATCH) return;
    }
  }

  async write<T>(_applied: number, run: (slot: WriteSlot) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      this.failed(err);
      throw new Error(`PostgreSQL unavailable: ${this.lastError}`);
    }
    let open = false;
    try {
      await client.query("BEGIN");
      open = true;
      await client.query("SELECT pg_advisory_xact_lock($1)", [WRITE_LOCK]);
      // Under the lock: what other replicas committed is applied first, so the plan sees it.
      await this.fetchSteps(client);
      const result = await run({
        rev: this.applied + 1,
        commit: async (step) => {
          await client.query("INSERT INTO portier_scim_steps (rev, changes) VALUES ($1, $2)", [
            step.rev,
            JSON.stringify(step.changes),
          ]);
          for (const c of step.changes) {
            if (c.resource)
              await client.query(
                "INSERT INTO portier_scim_resources (type, id, rev, resource) VALUES ($1, $2, $3, $4) " +
                  "ON CONFLICT (type, id) DO UPDATE SET rev = excluded.rev, resource = excluded.resource",
                [c.type, c.id, step.rev, JSON.stringify(c.resource)],
              );
            else await client.query("DELETE FROM portier_scim_resources WHERE type = $1 AND id = $2", [c.type, c.id]);
          }
          await client.query("SELECT pg_notify($1, $2)", [CHANNEL, String(step.rev)]);
          await client.query("COMMIT");
          open = false;
          // The caller applies the step right after this returns, before any other I/O callback runs.
          this.applied = step.rev;
          this.written++;
          this.contact();
          this.lastError = undefined;
          if (step.rev > this.head) this.head = step.rev;
        },
      });
      return result;
    } catch (err) {
      if (open) await client.query("ROLLBACK").catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  status(): StoreStatus {
    return {
      kind: "postgres",
      url: redactUrls(this.url),
      connected: this.connected,
      revision: this.applied,
      head: this.head,
      lag: Math.max(0, this.head - this.applied),
      written: this.written,
      ...(this.lastContact ? { lastContact: new Date(this.lastContact).toISOString() } : {}),
      ...(this.lastError && !this.connected ? { lastError: this.lastError } : {}),
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    const listener = this.listener;
    this.listener = undefined;
    await listener?.end().catch(() => undefined);
    await this.catching;
    await this.pool.end().catch(() => undefined);
  }
}
