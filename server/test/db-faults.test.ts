// The database going away under a running server: a PostgreSQL connection terminated while a
// transaction holds it must not crash the process (pg emits 'error' on a checked-out client), the
// request gets DATABASE_UNAVAILABLE (HTTP 503, retryable), and the next one succeeds on a fresh
// connection — no restart.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClaimKeywordsDocument } from "../../spiders/src/gql/graphql.ts";
import { isDatabaseUnavailable } from "../src/errors.ts";
import { servicesAvailable } from "./databases.ts";
import { startServer, type TestServer } from "./harness.ts";

describe("isDatabaseUnavailable", () => {
  it("knows lost connections and locks from request errors", () => {
    expect(isDatabaseUnavailable(Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" }))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" }))).toBe(true);
    expect(isDatabaseUnavailable({ originalError: new Error("Connection terminated unexpectedly") })).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error("duplicate key"), { code: "23505" }))).toBe(false);
    expect(isDatabaseUnavailable(new Error("boom"))).toBe(false);
  });
});

describe.runIf(await servicesAvailable("PostgreSQL connection faults", ["postgres"]))("PostgreSQL backends terminated mid-transaction", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer("postgres");
    await s.importKeywords("boss", ["a", "b", "c"], ["x"]);
  });
  afterAll(() => s?.close());

  it("answers DATABASE_UNAVAILABLE (503), keeps running, and the next request succeeds", async () => {
    const db = s.app.services.database;
    const admin = new pg.Client({ connectionString: process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres" });
    await admin.connect();
    const dbName = new URL(s.db.url).pathname.slice(1);
    // Inside a transaction (the client checked out of the pool), the backend is terminated.
    const failed = await db
      .transaction(async (tx) => {
        await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [dbName]);
        await new Promise((r) => setTimeout(r, 100)); // the client's 'error' event arrives while checked out
        await tx.query({ sql: "SELECT 1", text: "SELECT 1", values: [] } as never);
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    await admin.end();
    expect(isDatabaseUnavailable(failed)).toBe(true);
    // Still serving, on fresh connections.
    const r = await s.request(ClaimKeywordsDocument, { source: "boss", crawlerId: "after", limit: 1 }, { token: s.tokens.spider });
    expect(r.errors).toBeUndefined();
    expect(r.data?.claimKeywords).toHaveLength(1);
  });

  it("a request whose connection is terminated gets DATABASE_UNAVAILABLE with HTTP 503", async () => {
    const admin = new pg.Client({ connectionString: process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres" });
    await admin.connect();
    const dbName = new URL(s.db.url).pathname.slice(1);
    // Hold a lock so the claim's transaction waits on its connection, then terminate that connection.
    const locker = new pg.Client({ connectionString: s.db.url });
    await locker.connect();
    await locker.query(`BEGIN; LOCK TABLE "Keyword" IN ACCESS EXCLUSIVE MODE`);
    const pending = s.request(ClaimKeywordsDocument, { source: "boss", crawlerId: "victim", limit: 1 }, { token: s.tokens.spider });
    await new Promise((r) => setTimeout(r, 300));
    const lockerPid = (await locker.query("SELECT pg_backend_pid() AS pid")).rows[0].pid;
    await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> $2 AND pid <> pg_backend_pid()`, [dbName, lockerPid]);
    await locker.query("ROLLBACK");
    await locker.end();
    await admin.end();
    const r = await pending;
    expect(r.status).toBe(503);
    expect(r.errors?.[0]?.extensions?.code).toBe("DATABASE_UNAVAILABLE");
    const again = await s.request(`{ stats(source: "boss") { total } }`);
    expect(again.data).toEqual({ stats: { total: 3 } });
  });
});
