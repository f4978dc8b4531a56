// The one database handle. SQLite (embedded default) or PostgreSQL, chosen by DATABASE_URL.
// Reads go through Prisma (typed, and what plugin-prisma resolves relations with); every write goes
// through `transaction()`: raw SQL built with Prisma.sql, so one statement text serves both, run on
// the plain driver (better-sqlite3 / node-postgres).
import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { Worker } from "node:worker_threads";
import BetterSqlite3 from "better-sqlite3";
import pg from "pg";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import { Prisma, PrismaClient as SqliteClient } from "../../../generated/sqlite/client.ts";
import { PrismaClient as PostgresClient } from "../../../generated/postgres/client.ts";

/** Prisma client type shared by both databases (the PostgreSQL client is cast to it). */
export type Db = SqliteClient;
export type Provider = "sqlite" | "postgres";

/** A write transaction: raw statements, values always bound. */
export interface SqlTx {
  query<T = Record<string, unknown>>(sql: Prisma.Sql): Promise<T[]>;
  /** Returns the number of rows changed. */
  execute(sql: Prisma.Sql): Promise<number>;
}

export interface Database {
  provider: Provider;
  /** Reads and GraphQL field resolution; on SQLite it sees committed data only (WAL). */
  reader: Db;
  /** A raw read of committed data, for reads on every request (where Prisma's own cost shows). */
  query<T = Record<string, unknown>>(sql: Prisma.Sql): Promise<T[]>;
  /**
   * Run `fn` in one write transaction; it commits when `fn` resolves and rolls back when it throws.
   * On SQLite transactions run one at a time (BEGIN IMMEDIATE on a dedicated connection); on
   * PostgreSQL they run concurrently and lock rows as their statements say.
   */
  transaction<T>(fn: (tx: SqlTx) => Promise<T>): Promise<T>;
  /**
   * PostgreSQL only: each statement on its own, committed as it returns (one round trip, no
   * BEGIN/COMMIT). For writes that are one statement: atomic by themselves, and guarded by a
   * compare-and-set or row locks taken within the statement.
   */
  autocommit?: SqlTx;
  /** SQLite only: what the WAL checkpointer thread has done. */
  checkpoints?: () => CheckpointStats;
  close(): Promise<void>;
}

/** An enum value in raw SQL: PostgreSQL needs a cast to the enum type; SQLite stores text. */
export function enumParam(provider: Provider, type: "CrawlStatus" | "Role" | "CollectorStatus" | "CollectorSink", value: string): Prisma.Sql {
  return provider === "postgres" ? Prisma.sql`${value}::${Prisma.raw(`"${type}"`)}` : Prisma.sql`${value}`;
}

export function providerOf(url: string): Provider {
  return url.startsWith("file:") ? "sqlite" : "postgres";
}

/** Absolute file path of a `file:` URL, relative paths taken from the working directory. */
export function sqlitePath(url: string): string {
  return resolve(url.replace(/^file:/, "").replace(/\?.*$/, ""));
}

/** Transactions wait their turn under load rather than fail. */
const TX_OPTIONS = { maxWait: 15_000, timeout: 15_000 };
/** How long a write waits for another process's SQLite write lock before it fails. */
const BUSY_GIVE_UP_MS = 10_000;
/** Prepared statements kept per SQLite connection (statement texts are few and fixed). */
const STATEMENT_CACHE = 256;

/**
 * A timestamp's text → Date, the costly part of reading a row. The same few texts recur (a
 * transaction's `now` on every row it wrote, the import time of a whole batch of keywords), so
 * their values are kept — up to `max` texts, then forgotten all at once. Each call gets a new Date.
 */
function memoTimes(parse: (text: string) => number, max = 4096): (text: string) => Date {
  const seen = new Map<string, number>();
  return (text) => {
    let ms = seen.get(text);
    if (ms === undefined) {
      if (seen.size >= max) seen.clear();
      seen.set(text, (ms = parse(text)));
    }
    return new Date(ms);
  };
}
const sqliteDate = memoTimes(Date.parse);

/** Prisma stores SQLite DateTime as ISO-8601 text with an explicit offset; so must we. */
const sqliteValue = (v: unknown) =>
  v instanceof Date ? v.toISOString().replace("Z", "+00:00") : typeof v === "boolean" ? (v ? 1 : 0) : v === undefined ? null : v;

/** A better-sqlite3 connection with a cache of prepared statements and Prisma's value formats. */
class SqliteConnection {
  protected readonly conn: BetterSqlite3.Database;
  private readonly statements = new Map<string, { stmt: BetterSqlite3.Statement; convert: (row: any) => any }>();

  /** `busyTimeoutMs`: how long a statement waits for another process's lock — blocking the thread. */
  constructor(path: string, busyTimeoutMs: number) {
    this.conn = new BetterSqlite3(path, { timeout: busyTimeoutMs });
    this.conn.pragma("journal_mode = WAL");
    // NORMAL sync in WAL mode is durable against process crashes (the WAL is in the OS cache);
    // only the last transactions before a power loss are at risk, for ~7× write speed.
    this.conn.pragma("synchronous = NORMAL");
    this.conn.pragma("foreign_keys = ON");
    this.conn.pragma("cache_size = -65536");
    this.conn.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
  }

  private prepare(text: string) {
    let entry = this.statements.get(text);
    if (!entry) {
      const stmt = this.conn.prepare(text);
      // Columns Prisma declares DATETIME / BOOLEAN come back as text / integers: convert them.
      const dates = stmt.reader ? stmt.columns().filter((c) => c.type === "DATETIME").map((c) => c.name) : [];
      const bools = stmt.reader ? stmt.columns().filter((c) => c.type === "BOOLEAN").map((c) => c.name) : [];
      const convert = (row: Record<string, unknown>) => {
        for (const c of dates) if (typeof row[c] === "string") row[c] = sqliteDate(row[c] as string);
        for (const c of bools) if (row[c] !== null) row[c] = Boolean(row[c]);
        return row;
      };
      if (this.statements.size >= STATEMENT_CACHE) this.statements.delete(this.statements.keys().next().value!);
      entry = { stmt, convert };
      this.statements.set(text, entry);
    }
    return entry;
  }

  readonly tx: SqlTx = {
    query: async <T>(sql: Prisma.Sql) => {
      const { stmt, convert } = this.prepare(sql.sql);
      return stmt.all(...sql.values.map(sqliteValue)).map(convert) as T[];
    },
    execute: async (sql: Prisma.Sql) => this.prepare(sql.sql).stmt.run(...sql.values.map(sqliteValue)).changes,
  };

  close() {
    this.conn.close();
  }
}

/** The checkpointer thread's script. */
const CHECKPOINT_SCRIPT = new URL("./checkpoint-worker.mjs", import.meta.url);
/** WAL pages after which a commit checkpoints (when no checkpointer thread does it). */
const AUTOCHECKPOINT_PAGES = 10_000;
/** A WAL grown past this (a burst, a long read) is cut back to it once a checkpoint has copied it all. */
const WAL_KEEP_BYTES = 64 * 1024 * 1024;

/** What the checkpointer did since the process started (for /metrics). */
export interface CheckpointStats {
  /** Checkpoints run. */
  runs: number;
  /** Of them, the ones that let the WAL start over. */
  restarts: number;
  /** Time spent in them (in the checkpointer's thread), seconds. */
  seconds: number;
  /** WAL pages at the last checkpoint. */
  walPages: number;
  /** false once the thread failed or stopped: commits checkpoint themselves again. */
  running: boolean;
}

/**
 * Checkpoints the writer's WAL from a worker thread (checkpoint-worker.mjs) so the copy and its
 * fsyncs never stop the event loop: with SQLite's autocheckpoint a commit every 10k pages stalled
 * all requests for 50–75 ms. If the thread fails, the writer checkpoints on commit again.
 */
class SqliteCheckpointer {
  readonly stats: CheckpointStats = { runs: 0, restarts: 0, seconds: 0, walPages: 0, running: true };
  private readonly worker: Worker;
  private readonly exited: Promise<void>;
  /** [0] is 1 while the thread's RESTART checkpoint wants the write lock. */
  private readonly turn = new Int32Array(new SharedArrayBuffer(4));

  constructor(path: string, script: URL, onFailure: (e: Error) => void) {
    this.worker = new Worker(script, {
      workerData: { path, idleMs: 50, copyPages: 1000, restartPages: AUTOCHECKPOINT_PAGES, restartLeft: 100, restartWaitMs: 20, turn: this.turn.buffer },
    });
    this.worker.unref();
    this.worker.on("message", (m: { walPages: number; ms: number; restarted: boolean }) => {
      this.stats.runs++;
      if (m.restarted) this.stats.restarts++;
      this.stats.seconds += m.ms / 1000;
      this.stats.walPages = m.walPages;
    });
    const fail = (e: Error) => {
      if (!this.stats.running) return;
      this.stats.running = false;
      onFailure(e);
    };
    this.worker.on("error", fail);
    this.exited = new Promise((resolve) =>
      this.worker.once("exit", (code) => {
        Atomics.store(this.turn, 0, 0);
        if (code !== 0) fail(new Error(`checkpoint thread exited with code ${code}`));
        resolve();
      }),
    );
  }

  /** Before the writer begins: while a RESTART checkpoint wants the lock, wait (at most maxMs). */
  async yieldTurn(maxMs = 200) {
    for (let t0 = Date.now(); Atomics.load(this.turn, 0) === 1 && Date.now() - t0 < maxMs; ) {
      await new Promise((r) => setTimeout(r, 1));
    }
  }

  /** Let the running checkpoint finish, then end the thread. */
  async stop() {
    this.stats.running = false;
    this.worker.postMessage("stop");
    const timeout = setTimeout(() => void this.worker.terminate(), 5000);
    await this.exited;
    clearTimeout(timeout);
  }
}

/** Transactions committed together at most (see SqliteWriter). */
const GROUP_MAX = 64;

interface Queued {
  fn: (tx: SqlTx) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (e: unknown) => void;
}

/**
 * SQLite writes on a connection of their own. Statements are synchronous and take microseconds; a
 * queue lets one transaction run at a time, and every write in the process goes through it, so
 * nothing ever waits on SQLite's lock while holding the event loop.
 *
 * Group commit: each transaction runs inside a savepoint of its own within one SQLite transaction;
 * before committing, the writer lets the event loop turn once (setImmediate), and the transactions
 * queued meanwhile (the requests that arrived) join the same SQLite transaction, up to GROUP_MAX.
 * One that throws is rolled back to its savepoint and alone gets the error; the rest are committed
 * together, and no caller hears back before that commit. The commit — writing the WAL, the
 * syscalls — is most of a small transaction's cost; under load it is paid once per group (page
 * reports at C=32: about half the server CPU per report).
 */
class SqliteWriter extends SqliteConnection {
  private readonly pending: Queued[] = [];
  private running = false;

  private readonly checkpointer: SqliteCheckpointer | null;

  /** `checkpointScript`: a SqliteCheckpointer running it checkpoints the WAL; null: the commit that fills it. */
  constructor(path: string, checkpointScript: URL | null) {
    // Never wait inside SQLite (that would stop the event loop): begin() waits asynchronously.
    super(path, 0);
    this.conn.pragma(`journal_size_limit = ${WAL_KEEP_BYTES}`);
    if (!checkpointScript) {
      this.checkpointer = null;
      return;
    }
    // Commits no longer checkpoint: the checkpointer's thread does (unless it fails).
    this.conn.pragma("wal_autocheckpoint = 0");
    this.checkpointer = new SqliteCheckpointer(path, checkpointScript, () => {
      if (this.conn.open) this.conn.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
    });
  }

  get checkpoints(): CheckpointStats | undefined {
    return this.checkpointer?.stats;
  }

  override async close() {
    await this.checkpointer?.stop();
    super.close();
  }

  /** Take the write lock; while another process (a CLI, say) holds it, retry without blocking. */
  private async begin() {
    await this.checkpointer?.yieldTurn();
    // Every millisecond at first (a checkpoint holds the lock for a few), then backing off.
    for (let waited = 0, wait = 1; ; wait = waited < 50 ? 1 : Math.min(wait * 2, 100)) {
      try {
        this.conn.exec("BEGIN IMMEDIATE");
        return;
      } catch (e) {
        if ((e as { code?: string }).code !== "SQLITE_BUSY" || waited >= BUSY_GIVE_UP_MS) throw e;
        await new Promise((r) => setTimeout(r, wait));
        waited += wait;
      }
    }
  }

  transaction<T>(fn: (tx: SqlTx) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain() {
    this.running = true;
    try {
      while (this.pending.length) await this.runGroup(this.pending.splice(0, GROUP_MAX));
    } finally {
      this.running = false;
    }
  }

  private async runGroup(group: Queued[]) {
    try {
      await this.begin();
    } catch (e) {
      for (const q of group) q.reject(e);
      return;
    }
    const ran: { q: Queued; value: unknown }[] = [];
    for (let i = 0; i < group.length; i++) {
      const q = group[i]!;
      this.conn.exec("SAVEPOINT member");
      try {
        const value = await q.fn(this.tx);
        this.conn.exec("RELEASE member");
        ran.push({ q, value });
      } catch (e) {
        if (!this.conn.inTransaction) {
          // SQLite rolled the whole transaction back (an I/O error, say): what ran before is gone
          // too. Those callers get the error; the ones not run yet go first in the next group.
          for (const r of ran) r.q.reject(e);
          q.reject(e);
          this.pending.unshift(...group.slice(i + 1));
          return;
        }
        this.conn.exec("ROLLBACK TO member");
        this.conn.exec("RELEASE member");
        q.reject(e);
      }
      if (i === group.length - 1 && group.length < GROUP_MAX) {
        // Let the requests that arrived meanwhile join before the commit.
        await new Promise((r) => setImmediate(r));
        group.push(...this.pending.splice(0, GROUP_MAX - group.length));
      }
    }
    try {
      this.conn.exec("COMMIT");
    } catch (e) {
      if (this.conn.inTransaction) this.conn.exec("ROLLBACK");
      for (const r of ran) r.q.reject(e);
      return;
    }
    for (const r of ran) r.q.resolve(r.value);
  }
}

async function openSqlite(url: string, { sqliteCheckpoints = "thread", checkpointScript }: OpenOptions): Promise<Database> {
  const path = sqlitePath(url);
  mkdirSync(dirname(path), { recursive: true });
  const writer = new SqliteWriter(path, sqliteCheckpoints === "thread" ? (checkpointScript ?? CHECKPOINT_SCRIPT) : null);
  // WAL readers never wait for the writer; the short timeout only covers WAL recovery.
  const rawReader = new SqliteConnection(path, 1_000);
  const reader = new SqliteClient({ adapter: new PrismaBetterSQLite3({ url: path, timeout: 10_000 }), transactionOptions: TX_OPTIONS });
  await reader.$executeRawUnsafe("PRAGMA foreign_keys = ON");
  return {
    provider: "sqlite",
    reader,
    query: (sql) => rawReader.tx.query(sql),
    transaction: (fn) => writer.transaction(fn),
    checkpoints: writer.checkpoints ? () => writer.checkpoints! : undefined,
    async close() {
      await reader.$disconnect();
      rawReader.close();
      await writer.close();
    },
  };
}

/** PostgreSQL `timestamp` columns hold UTC wall-clock time (as Prisma writes them). */
const TIMESTAMP = 1114;
const pgTimestamp = memoTimes((v) => Date.parse(`${v.replace(" ", "T")}Z`));
const pgTypes = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === TIMESTAMP ? pgTimestamp : pg.types.getTypeParser(oid, format as never)) as typeof pg.types.getTypeParser,
};
const pgValue = (v: unknown) => (v instanceof Date ? v.toISOString() : v === undefined ? null : v);

/** Distinct statement texts given a name (prepared once per connection); beyond it, unnamed. */
const PG_PREPARED_MAX = 500;
const pgNames = new Map<string, string>();
/** A query config that node-postgres prepares once per connection and then only executes. */
function pgQuery(sql: Prisma.Sql) {
  let name = pgNames.get(sql.text);
  if (!name && pgNames.size < PG_PREPARED_MAX) pgNames.set(sql.text, (name = `ccp_${pgNames.size}`));
  return { text: sql.text, values: sql.values.map(pgValue), ...(name ? { name } : {}) };
}

export interface OpenOptions {
  /** PostgreSQL: connections for writes; reads get half as many again. @default 20 */
  poolMax?: number;
  /** SQLite: WAL checkpoints on a thread of their own, or by the commit that fills the WAL. @default "thread" */
  sqliteCheckpoints?: "thread" | "commit";
  /** SQLite, tests: the checkpointer thread's script instead of checkpoint-worker.mjs (one that fails, say). */
  checkpointScript?: URL;
}

async function openPostgres(url: string, { poolMax = 20 }: OpenOptions): Promise<Database> {
  const reader = new PostgresClient({
    adapter: new PrismaPg({ connectionString: url, max: Math.max(1, Math.ceil(poolMax / 2)) }),
    transactionOptions: TX_OPTIONS,
  }) as unknown as Db;
  await reader.$queryRawUnsafe("SELECT 1");
  // Writes on node-postgres directly: a transaction is a few statements, and the driver's
  // round trip is the whole cost of each.
  const pool = new pg.Pool({ connectionString: url, max: poolMax, types: pgTypes });
  // An idle connection that dies (server restart, admin termination) is dropped by the pool; the
  // next transaction opens a fresh one. Without a listener the error would crash the process.
  pool.on("error", () => {});
  return {
    provider: "postgres",
    reader,
    query: async <T>(sql: Prisma.Sql) => (await pool.query(pgQuery(sql))).rows as T[],
    autocommit: {
      query: async <T>(sql: Prisma.Sql) => (await pool.query(pgQuery(sql))).rows as T[],
      execute: async (sql: Prisma.Sql) => (await pool.query(pgQuery(sql))).rowCount ?? 0,
    },
    async transaction(fn) {
      const client = await pool.connect();
      let broken = false;
      // A connection that dies while checked out (backend terminated, server restart) emits
      // 'error' on the client, not on the pool: without a listener that error crashes the process.
      // The statement in flight fails on its own; the connection is dropped at release.
      const onError = () => {
        broken = true;
      };
      client.on("error", onError);
      const run = (sql: Prisma.Sql) => client.query(pgQuery(sql));
      try {
        await client.query("BEGIN");
        const result = await fn({
          query: async <T>(sql: Prisma.Sql) => (await run(sql)).rows as T[],
          execute: async (sql: Prisma.Sql) => (await run(sql)).rowCount ?? 0,
        });
        await client.query("COMMIT");
        return result;
      } catch (e) {
        await client.query("ROLLBACK").catch(() => {
          broken = true; // the connection itself failed: drop it from the pool
        });
        throw e;
      } finally {
        client.removeListener("error", onError);
        client.release(broken);
      }
    },
    async close() {
      await Promise.all([reader.$disconnect(), pool.end()]);
    },
  };
}

export function openDatabase(url: string, options: OpenOptions = {}): Promise<Database> {
  return providerOf(url) === "sqlite" ? openSqlite(url, options) : openPostgres(url, options);
}
