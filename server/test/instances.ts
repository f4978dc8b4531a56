// Several real server processes on one database, for the scale-out tests: each is `tsx
// server/src/main.ts` as `npm start` runs it, spawned by process.ts and killable with SIGKILL.
import { createToken, Role } from "../src/auth/tokens.ts";
import type { Database } from "../src/db/client.ts";
import { preparedTestDatabase, type TestDatabase } from "./databases.ts";
import { middayTimeZone } from "./harness.ts";
import { spawnServer, type ServerProcess } from "./process.ts";

export interface Cluster {
  tdb: TestDatabase;
  /** A direct handle on the shared database, for setup and for checking what was stored. */
  db: Database;
  servers: ServerProcess[];
  tokens: { spider: string; admin: string; viewer: string };
  close(): Promise<void>;
}

/** POST one GraphQL operation; resolves with the body (errors included) or rejects if the server is gone. */
export async function gql(url: string, token: string, query: string, variables: Record<string, unknown> = {}) {
  const r = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ query, variables }),
  });
  return (await r.json()) as { data?: any; errors?: { message: string; extensions?: { code?: string } }[] };
}

/** Like gql, but throws on GraphQL errors. */
export async function ok(url: string, token: string, query: string, variables: Record<string, unknown> = {}) {
  const r = await gql(url, token, query, variables);
  if (r.errors?.length) throw new Error(`GraphQL error from ${url}: ${JSON.stringify(r.errors)}`);
  return r.data;
}

/**
 * A fresh PostgreSQL database, migrated and seeded, `prepare`d, then `n` server processes on it
 * with `env`. The real clock, in a time zone where it is midday (no crawl day turns mid-test).
 * The caller closes it (afterAll).
 */
export async function startCluster(
  n: number,
  env: Record<string, string> = {},
  prepare: (db: Database) => Promise<void> = async () => {},
): Promise<Cluster> {
  const { tdb, db } = await preparedTestDatabase("postgres", { poolMax: 4 });
  await prepare(db);
  const tokens = {
    spider: (await createToken(db, Role.SPIDER, "cluster-spider")).token,
    admin: (await createToken(db, Role.ADMIN, "cluster-admin")).token,
    viewer: (await createToken(db, Role.VIEWER, "cluster-viewer")).token,
  };
  const zone = middayTimeZone();
  const servers: ServerProcess[] = [];
  const cluster: Cluster = {
    tdb,
    db,
    servers,
    tokens,
    async close() {
      await Promise.all(servers.map((s) => s.kill()));
      await db.close();
      await tdb.drop();
    },
  };
  // One at a time: both would migrate at once otherwise (safe, but slower on two cores).
  // Small pools: several instances and other test files share the local PostgreSQL's connections.
  for (let i = 0; i < n; i++) servers.push(await spawnServer({ DATABASE_URL: tdb.url, CRAWL_TZ: zone, PG_POOL_MAX: "8", ...env }));
  return cluster;
}
