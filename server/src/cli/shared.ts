// What every operator CLI needs: the settings and a migrated database, same as the server's.
import { loadDotEnv, parseConfig } from "../config.ts";
import { type Database, openDatabase } from "../db/client.ts";
import { migrate } from "../db/migrate.ts";
import { seedSources } from "../db/seed.ts";

export async function openCliDatabase(): Promise<Database> {
  loadDotEnv();
  const config = parseConfig();
  await migrate(config.DATABASE_URL);
  const db = await openDatabase(config.DATABASE_URL);
  await seedSources(db);
  return db;
}

/** Print a typed API error (or any error) as one line and exit 1. */
export function fail(e: unknown): never {
  const err = e as { message?: string; extensions?: { code?: string } };
  console.error(err.extensions?.code ? `${err.extensions.code}: ${err.message}` : `error: ${err.message ?? String(e)}`);
  process.exit(1);
}
