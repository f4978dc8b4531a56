// Which databases the integration suite runs on. SQLite always; PostgreSQL when one answers at
// TEST_POSTGRES_URL (default: the local server). Without it the suite says so and skips those runs,
// except under CI=true, where a missing PostgreSQL is a failure. Redis (TEST_REDIS_URL) likewise
// for the suites that need it.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { type Database, openDatabase, type OpenOptions } from "../src/db/client.ts";
import { migrate } from "../src/db/migrate.ts";
import { seedSources } from "../src/db/seed.ts";
import { Redis } from "ioredis";

export interface TestDatabase {
  provider: "sqlite" | "postgres";
  url: string;
  drop(): Promise<void>;
}

const ADMIN_URL = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

let pgAvailable: Promise<string | null> | undefined;
/** null when PostgreSQL is reachable, else why not. */
export function postgresUnavailable(): Promise<string | null> {
  pgAvailable ??= (async () => {
    const c = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 2000 });
    try {
      await c.connect();
      await c.query("SELECT 1");
      return null;
    } catch (e) {
      return `PostgreSQL not reachable at ${ADMIN_URL.replace(/\/\/[^@]*@/, "//")} (${(e as Error).message})`;
    } finally {
      await c.end().catch(() => {});
    }
  })();
  return pgAvailable;
}

export async function createTestDatabase(provider: "sqlite" | "postgres"): Promise<TestDatabase> {
  if (provider === "sqlite") {
    const dir = mkdtempSync(join(tmpdir(), "ccp-test-"));
    return { provider, url: `file:${join(dir, "crawl.db")}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `ccp_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    provider,
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: ADMIN_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    },
  };
}

/** A fresh database, migrated and with the sources seeded, and a handle on it (for a server process to share). */
export async function preparedTestDatabase(provider: "sqlite" | "postgres", options: OpenOptions = {}): Promise<{ tdb: TestDatabase; db: Database }> {
  const tdb = await createTestDatabase(provider);
  await migrate(tdb.url);
  const db = await openDatabase(tdb.url, options);
  await seedSources(db);
  return { tdb, db };
}

/** The providers to run on, with a printed note for each one skipped. */
export async function testProviders(): Promise<("sqlite" | "postgres")[]> {
  const why = await postgresUnavailable();
  if (!why) return ["sqlite", "postgres"];
  if (process.env.CI === "true") throw new Error(`CI=true but ${why}`);
  console.warn(`[skip] PostgreSQL runs of the integration suite skipped: ${why}`);
  return ["sqlite"];
}

const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

let redisAvailable: Promise<string | null> | undefined;
/** null when Redis answers at TEST_REDIS_URL (default: the local server), else why not. */
export function redisUnavailable(): Promise<string | null> {
  redisAvailable ??= (async () => {
    const r = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null });
    r.on("error", () => {});
    try {
      await r.connect();
      await r.ping();
      return null;
    } catch (e) {
      return `Redis not reachable at ${REDIS_URL.replace(/\/\/[^@]*@/, "//")} (${(e as Error).message})`;
    } finally {
      r.disconnect();
    }
  })();
  return redisAvailable;
}

/** Redis for a test: the URL and a channel prefix of its own, so tests sharing one Redis never hear each other. */
export function testRedis(): { REDIS_URL: string; REDIS_CHANNEL_PREFIX: string } {
  return { REDIS_URL, REDIS_CHANNEL_PREFIX: `test:${randomBytes(6).toString("hex")}:` };
}

/**
 * Whether a suite that needs these services can run. When one is missing it prints why and returns
 * false (the suite is skipped), except under CI=true, where a missing service is a failure.
 */
export async function servicesAvailable(suite: string, services: ("postgres" | "redis")[]): Promise<boolean> {
  for (const s of services) {
    const why = await (s === "postgres" ? postgresUnavailable() : redisUnavailable());
    if (!why) continue;
    if (process.env.CI === "true") throw new Error(`CI=true but ${why}`);
    console.warn(`[skip] ${suite} skipped: ${why}`);
    return false;
  }
  return true;
}
