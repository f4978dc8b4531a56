// SQLite's group commit (SqliteWriter): transactions queued behind a running one run together in
// one SQLite transaction, each in a savepoint of its own, and are committed once — a member that
// throws is undone alone and alone gets the error, and no caller hears back before the commit.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prisma } from "../../../generated/sqlite/client.ts";
import { preparedTestDatabase, type TestDatabase } from "../../test/databases.ts";
import type { Database } from "./client.ts";

describe("SQLite group commit", () => {
  let tdb: TestDatabase;
  let db: Database;
  beforeAll(async () => {
    ({ tdb, db } = await preparedTestDatabase("sqlite"));
  });
  afterAll(async () => {
    await db?.close();
    await tdb?.drop();
  });

  const insert = (id: string) =>
    Prisma.sql`INSERT INTO "Source" ("id", "name", "maxPages", "updatedAt") VALUES (${id}, ${id}, 5, ${new Date()})`;
  const committed = async (ids: string[]) =>
    (await db.query<{ id: string }>(Prisma.sql`SELECT "id" FROM "Source" WHERE "id" IN (${Prisma.join(ids)}) ORDER BY "id"`)).map((r) => r.id);

  it("runs what queued behind a transaction as one group: a failing member undone alone, the rest committed together", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    // A transaction that holds the writer until the others are queued.
    const first = db.transaction(async (tx) => {
      await tx.execute(insert("g0"));
      await gate;
      return "first";
    });
    const seenByReader: string[][] = [];
    const group = [
      db.transaction(async (tx) => (await tx.execute(insert("g1")), "one")),
      db.transaction(async (tx) => {
        await tx.execute(insert("g2"));
        throw new Error("boom"); // undone: g2 never committed
      }),
      db.transaction((tx) => tx.execute(insert("g1"))), // the same key again: a constraint error, undone alone
      db.transaction(async (tx) => {
        // The group's own writes are visible to its later members, and not yet to any other
        // connection: nothing of the group has been committed while it runs.
        seenByReader.push(await committed(["g1", "g3"]));
        await tx.execute(insert("g3"));
        return (await tx.query<{ n: number }>(Prisma.sql`SELECT count(*) AS n FROM "Source" WHERE "id" IN ('g1', 'g2', 'g3')`))[0]!.n;
      }),
    ];
    const all = Promise.allSettled(group); // handlers attached before any member runs
    release();
    expect(await first).toBe("first");
    const settled = await all;
    expect(settled.map((s) => s.status)).toEqual(["fulfilled", "rejected", "rejected", "fulfilled"]);
    expect((settled[1] as PromiseRejectedResult).reason.message).toBe("boom");
    expect(String((settled[2] as PromiseRejectedResult).reason)).toMatch(/UNIQUE/);
    expect((settled[0] as PromiseFulfilledResult<string>).value).toBe("one");
    expect((settled[3] as PromiseFulfilledResult<number>).value).toBe(2); // g1 and g3, not g2
    expect(seenByReader).toEqual([[]]);
    expect(await committed(["g0", "g1", "g2", "g3"])).toEqual(["g0", "g1", "g3"]);
  });

  it("a lone transaction that throws is rolled back and the writer goes on", async () => {
    await expect(db.transaction(async (tx) => (await tx.execute(insert("l1")), Promise.reject(new Error("no"))))).rejects.toThrow("no");
    await db.transaction((tx) => tx.execute(insert("l2")));
    expect(await committed(["l1", "l2"])).toEqual(["l2"]);
  });
});
