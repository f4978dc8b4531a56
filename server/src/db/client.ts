// The one database handle. SQLite (embedded default) or PostgreSQL, chosen by DATABASE_URL; both
// are driven through the same generated model types (`Db`).
import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient as SqliteClient } from "../../../generated/sqlite/client.ts";
import { PrismaClient as PostgresClient } from "../../../generated/postgres/client.ts";

/** Prisma client type shared by both databases (the PostgreSQL client is cast to it). */
export type Db = SqliteClient;
/** A transaction handle as given to `$transaction(async (tx) => …)`. */
export type Tx = Parameters<Parameters<Db["$transaction"]>[0]>[0];
export type Provider = "sqlite" | "postgres";

export interface Database {
  provider: Provider;
  /**
   * Writes, always inside `$transaction`. On SQLite this is its own connection: the driver runs
   * every statement on one connection and only serialises transactions, so a write outside one
   * could land inside another caller's open transaction.
   */
  writer: Db;
  /** Reads and GraphQL field resolution; on SQLite a second connection that sees committed data only. */
  reader: Db;
  close(): Promise<void>;
}

/** Under load, transactions queue (SQLite runs one at a time): wait for a turn rather than fail. */
const TX_OPTIONS = { maxWait: 15_000, timeout: 15_000 };

export function providerOf(url: string): Provider {
  return url.startsWith("file:") ? "sqlite" : "postgres";
}

/** Absolute file path of a `file:` URL, relative paths taken from the working directory. */
export function sqlitePath(url: string): string {
  return resolve(url.replace(/^file:/, "").replace(/\?.*$/, ""));
}

async function openSqlite(url: string): Promise<Database> {
  const path = sqlitePath(url);
  mkdirSync(dirname(path), { recursive: true });
  const open = () =>
    new SqliteClient({ adapter: new PrismaBetterSQLite3({ url: path, timeout: 10_000 }), transactionOptions: TX_OPTIONS });
  const writer = open();
  // WAL: readers never block the writer; NORMAL sync is durable against process crashes (the WAL
  // is in the OS cache), trading only the last transactions on power loss for ~7x write speed.
  await writer.$queryRawUnsafe("PRAGMA journal_mode = WAL");
  await writer.$executeRawUnsafe("PRAGMA synchronous = NORMAL");
  await writer.$executeRawUnsafe("PRAGMA foreign_keys = ON");
  const reader = open();
  await reader.$executeRawUnsafe("PRAGMA foreign_keys = ON");
  return {
    provider: "sqlite",
    writer,
    reader,
    async close() {
      await Promise.all([writer.$disconnect(), reader.$disconnect()]);
    },
  };
}

async function openPostgres(url: string): Promise<Database> {
  const client = new PostgresClient({
    adapter: new PrismaPg({ connectionString: url, max: 20 }),
    transactionOptions: TX_OPTIONS,
  }) as unknown as Db;
  await client.$queryRawUnsafe("SELECT 1");
  return {
    provider: "postgres",
    writer: client,
    reader: client,
    async close() {
      await client.$disconnect();
    },
  };
}

export function openDatabase(url: string): Promise<Database> {
  return providerOf(url) === "sqlite" ? openSqlite(url) : openPostgres(url);
}
