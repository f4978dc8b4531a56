// Applies the committed Prisma migrations at start-up, recording them in Prisma's own
// `_prisma_migrations` table so the Prisma CLI (migrate deploy / dev / status) agrees with us.
// Done here rather than by spawning the CLI: it takes milliseconds instead of seconds, and runs
// under a lock so several processes starting at once apply each migration once.
import { createHash, randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import BetterSqlite3 from "better-sqlite3";
import pg from "pg";
import { providerOf, sqlitePath } from "./client.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "../../../prisma");

interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

function migrationsFor(provider: "sqlite" | "postgres"): Migration[] {
  const dir = join(root, provider, "migrations");
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(dir, d.name, "migration.sql")))
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    });
}

const SQLITE_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" TEXT PRIMARY KEY NOT NULL, "checksum" TEXT NOT NULL, "finished_at" DATETIME,
  "migration_name" TEXT NOT NULL, "logs" TEXT, "rolled_back_at" DATETIME,
  "started_at" DATETIME NOT NULL DEFAULT current_timestamp, "applied_steps_count" INTEGER UNSIGNED NOT NULL DEFAULT 0)`;

const POSTGRES_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL, "checksum" VARCHAR(64) NOT NULL, "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL, "logs" TEXT, "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(), "applied_steps_count" INTEGER NOT NULL DEFAULT 0)`;

function migrateSqlite(url: string): string[] {
  const db = new BetterSqlite3(sqlitePath(url), { timeout: 30_000 });
  const applied: string[] = [];
  try {
    db.pragma("journal_mode = WAL");
    // IMMEDIATE takes the write lock up front: a second process waits instead of racing.
    db.exec("BEGIN IMMEDIATE");
    try {
      db.exec(SQLITE_TABLE);
      const done = new Set(
        db.prepare(`SELECT migration_name FROM _prisma_migrations WHERE rolled_back_at IS NULL AND finished_at IS NOT NULL`)
          .all()
          .map((r) => (r as { migration_name: string }).migration_name),
      );
      for (const m of migrationsFor("sqlite")) {
        if (done.has(m.name)) continue;
        db.exec(m.sql);
        const now = new Date().toISOString();
        db.prepare(
          `INSERT INTO _prisma_migrations (id, checksum, finished_at, migration_name, started_at, applied_steps_count) VALUES (?, ?, ?, ?, ?, 1)`,
        ).run(randomUUID(), m.checksum, now, m.name, now);
        applied.push(m.name);
      }
      db.exec("COMMIT");
    } catch (e) {
      db.exec("ROLLBACK");
      throw e;
    }
  } finally {
    db.close();
  }
  return applied;
}

async function migratePostgres(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const applied: string[] = [];
  try {
    await client.query("BEGIN");
    // A transaction-scoped advisory lock: concurrent starters queue here.
    await client.query("SELECT pg_advisory_xact_lock(7286001)");
    await client.query(POSTGRES_TABLE);
    const { rows } = await client.query<{ migration_name: string }>(
      `SELECT migration_name FROM _prisma_migrations WHERE rolled_back_at IS NULL AND finished_at IS NOT NULL`,
    );
    const done = new Set(rows.map((r) => r.migration_name));
    for (const m of migrationsFor("postgres")) {
      if (done.has(m.name)) continue;
      await client.query(m.sql);
      await client.query(
        `INSERT INTO _prisma_migrations (id, checksum, finished_at, migration_name, started_at, applied_steps_count) VALUES ($1, $2, now(), $3, now(), 1)`,
        [randomUUID(), m.checksum, m.name],
      );
      applied.push(m.name);
    }
    await client.query("COMMIT");
  } catch (e) {
    await client.query("ROLLBACK").catch(() => {});
    throw e;
  } finally {
    await client.end();
  }
  return applied;
}

/** Apply every migration not yet applied; returns the names applied now. */
export async function migrate(url: string): Promise<string[]> {
  if (providerOf(url) === "sqlite") {
    mkdirSync(dirname(sqlitePath(url)), { recursive: true });
    return migrateSqlite(url);
  }
  return migratePostgres(url);
}
