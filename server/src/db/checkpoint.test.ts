// SQLite WAL checkpoints run on a thread of their own (checkpoint-worker.mjs), not in the writer's
// commits: under writes that keep coming the WAL is still copied into the database file and starts
// over (it stays bounded), and nothing written is lost. If the thread fails, commits checkpoint again.
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setImmediate as turn } from "node:timers/promises";
import { pathToFileURL } from "node:url";
import BetterSqlite3 from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { Prisma } from "../../../generated/sqlite/client.ts";
import { createTestDatabase, type TestDatabase } from "../../test/databases.ts";
import { type Database, openDatabase, type OpenOptions, sqlitePath } from "./client.ts";

const PAGE = 4096;
/** SQLite's autocheckpoint and the thread's RESTART both come at 10k WAL pages. */
const WAL_PAGES = 10_000;

describe("SQLite checkpoints", () => {
  let tdb: TestDatabase | undefined;
  let db: Database | undefined;
  afterEach(async () => {
    await db?.close();
    await tdb?.drop();
    db = tdb = undefined;
  });

  const open = async (options: OpenOptions = {}) => {
    tdb = await createTestDatabase("sqlite");
    db = await openDatabase(tdb.url, options);
    return { db, path: sqlitePath(tdb.url) };
  };

  /**
   * `transactions` transactions of ten 4 KB rows, eight at a time (one group commit), never pausing
   * for more than a turn of the event loop; returns what they wrote and the largest the WAL got.
   */
  async function write(db: Database, path: string, transactions: number) {
    await db.transaction((tx) => tx.execute(Prisma.sql`CREATE TABLE blob_test (id INTEGER PRIMARY KEY, data BLOB NOT NULL)`));
    let largestWal = 0;
    for (let t = 0; t < transactions; t += 8) {
      await Promise.all(
        Array.from({ length: 8 }, () =>
          db.transaction(async (tx) => {
            for (let r = 0; r < 10; r++) await tx.execute(Prisma.sql`INSERT INTO blob_test (data) VALUES (randomblob(4000))`);
          }),
        ),
      );
      largestWal = Math.max(largestWal, statSync(`${path}-wal`).size);
      await turn();
    }
    return { written: transactions * 10 * PAGE, largestWal };
  }

  /** After close: every row in the database file, and the file sound. */
  function expectIntact(path: string, rows: number) {
    const check = new BetterSqlite3(path, { readonly: true });
    try {
      expect(check.prepare("SELECT count(*) AS n FROM blob_test").get()).toEqual({ n: rows });
      expect(check.pragma("integrity_check", { simple: true })).toBe("ok");
    } finally {
      check.close();
    }
  }

  it("a thread keeps the WAL bounded under steady writes, and every committed row is in the database file after close", async () => {
    const { db, path } = await open();
    // 60k pages (240 MB): with commits that never checkpoint and no thread doing it, the WAL would
    // hold all of it.
    const { written, largestWal } = await write(db, path, 6000);
    const stats = db.checkpoints!();
    expect(stats.running).toBe(true);
    expect(stats.runs).toBeGreaterThan(0);
    expect(stats.restarts).toBeGreaterThan(0);
    // Reused from its start after each RESTART (at 10k pages, or 20k if the writer outpaces the copy).
    expect(largestWal).toBeLessThan(written / 2);
    expect(largestWal).toBeLessThan(2.5 * WAL_PAGES * PAGE);
    await db.close();
    expect(stats.running).toBe(false);
    expectIntact(path, 60_000);
  });

  it("if the thread fails, commits checkpoint again: the WAL stays bounded and nothing is lost", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ccp-broken-checkpointer-"));
    try {
      const script = join(dir, "broken.mjs");
      writeFileSync(script, `throw new Error("checkpointer broken");\n`);
      const { db, path } = await open({ checkpointScript: pathToFileURL(script) });
      for (let i = 0; db.checkpoints!().running && i < 500; i++) await new Promise((r) => setTimeout(r, 10));
      expect(db.checkpoints!()).toMatchObject({ running: false, runs: 0 });
      // 30k pages (120 MB): the commit that fills the WAL to 10k pages checkpoints it.
      const { written, largestWal } = await write(db, path, 3000);
      expect(largestWal).toBeLessThan(written / 2);
      await db.close();
      expectIntact(path, 30_000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
