// On SQLite, another process holding the write lock (an operator's CLI, say) delays writes but
// never stops the server: the wait for the lock happens off the event loop.
import BetterSqlite3 from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClaimKeywordsDocument, HeartbeatDocument } from "../../spiders/src/gql/graphql.ts";
import { startServer, type TestServer } from "./harness.ts";

describe("SQLite write lock held elsewhere", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer("sqlite");
  });
  afterAll(() => s?.close());

  it("queues the write, keeps serving reads, and completes the write once the lock is released", async () => {
    await s.importKeywords("boss", ["locked"], ["out"]);
    const [c] = (await s.ok(ClaimKeywordsDocument, { source: "boss", crawlerId: "l", limit: 1 }, s.tokens.spider)).claimKeywords;
    const other = new BetterSqlite3(s.db.url.slice("file:".length));
    other.exec("BEGIN IMMEDIATE"); // another process's write transaction
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    const write = s.request(HeartbeatDocument, { keywordId: c!.keyword.id, leaseToken: c!.leaseToken }, { token: s.tokens.spider });
    // Reads answer while the write waits.
    const read = await s.ok(`{ stats(source: "boss") { byStatus { crawling } } }`);
    expect(read.stats.byStatus.crawling).toBe(1);
    await new Promise((r) => setTimeout(r, 400));
    other.exec("COMMIT");
    other.close();
    const r = await write;
    clearInterval(timer);
    expect(r.errors).toBeUndefined();
    expect(r.data?.heartbeat.status).toBe("CRAWLING");
    // The event loop kept running all along (a blocked loop would not have ticked).
    expect(ticks).toBeGreaterThan(10);
  });
});
