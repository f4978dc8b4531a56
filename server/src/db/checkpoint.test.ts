// SQLite WAL checkpoints run on a thread of their own (checkpoint-worker.mjs), not in the writer's
// commits: under writes that keep coming the WAL is still copied into the database file and starts
// over (it stays bounded), and nothing written is lost.
import { statSync } from "node:fs";
import { setImmediate as turn } from "node:timers/promises";
import BetterSqlite3 from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prisma } from "../../../generated/sqlite/client.ts";
import { createTestDatabase, type TestDatabase } from "../../test/databases.ts";
import { type Database, openDatabase, sqlitePath } from "./client.ts";

describe("SQLite checkpoints on a thread", () => {
  let tdb: TestDatabase;
  let db: Database;
  beforeAll(async () => {
    tdb = await createTestDatabase("sqlite");
    db = await openDatabase(tdb.url);
  });
  afterAll(async () => {
    await db?.close();
    await tdb?.drop();
  });

  it("keeps the WAL bounded under steady writes, and every committed row is in the database file after close", async () => {
    const path = sqlitePath(tdb.url);
    await db.transaction((tx) => tx.execute(Prisma.sql`CREATE TABLE blob_test (id INTEGER PRIMARY KEY, data BLOB NOT NULL)`));
    // 60k pages (240 MB) in 6000 transactions of ten 4 KB rows, eight at a time (one group commit):
    // with commits that never checkpoint and no thread doing it, the WAL would hold all of it.
    const ROWS = 10;
    const TRANSACTIONS = 6000;
    let largestWal = 0;
    for (let t = 0; t < TRANSACTIONS; t += 8) {
      await Promise.all(
        Array.from({ length: 8 }, (_, k) =>
          db.transaction(async (tx) => {
            for (let r = 0; r < ROWS; r++) await tx.execute(Prisma.sql`INSERT INTO blob_test (data) VALUES (randomblob(4000))`);
          }).then(() => t + k),
        ),
      );
      largestWal = Math.max(largestWal, statSync(`${path}-wal`).size);
      await turn();
    }
    const written = TRANSACTIONS * ROWS * 4096;
    const stats = db.checkpoints!();
    expect(stats.running).toBe(true);
    expect(stats.runs).toBeGreaterThan(0);
    expect(stats.restarts).toBeGreaterThan(0);
    // Reused from its start after each RESTART checkpoint (10k pages = 40 MB), cut back to 64 MB.
    expect(largestWal).toBeLessThan(written / 2);
    expect(largestWal).toBeLessThan(2.5 * 10_000 * 4096);

    await db.close();
    expect(stats.running).toBe(false);
    const check = new BetterSqlite3(path, { readonly: true });
    try {
      expect(check.prepare("SELECT count(*) AS n FROM blob_test").get()).toEqual({ n: TRANSACTIONS * ROWS });
      expect(check.pragma("integrity_check", { simple: true })).toBe("ok");
    } finally {
      check.close();
    }
    db = await openDatabase(tdb.url); // for afterAll
  });
});
