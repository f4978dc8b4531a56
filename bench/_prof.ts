import { createTestDatabase } from "/work/main/server/test/databases.ts";
import { migrate } from "/work/main/server/src/db/migrate.ts";
import { openDatabase } from "/work/main/server/src/db/client.ts";
import { seedSources } from "/work/main/server/src/db/seed.ts";
import { CrawlStore } from "/work/main/server/src/crawl/store.ts";
import { CrawlCalendar, systemClock } from "/work/main/server/src/crawl/crawl-day.ts";
import { importKeywords, crossProduct } from "/work/main/server/src/keywords/import.ts";
import { CrawlStatus } from "/work/main/server/src/crawl/rules.ts";
const tdb = await createTestDatabase("postgres");
await migrate(tdb.url);
const db = await openDatabase(tdb.url);
await seedSources(db);
await importKeywords(db, "qcwy", crossProduct(Array.from({ length: 3000 }, (_, i) => `c${i}`), ["b"]));
const store = new CrawlStore(db, new CrawlCalendar(systemClock, "Asia/Shanghai"));
let tc = 0, tk = 0, tr = 0;
for (let i = 0; i < 1500; i++) {
  const t0 = performance.now();
  const [k] = await store.claim("qcwy", "p", 1);
  const t1 = performance.now();
  await store.complete({ keywordId: k!.keyword.id, leaseToken: k!.leaseToken, status: CrawlStatus.COMPLETED });
  const t2 = performance.now();
  await db.autocommit!.query({ sql: "SELECT 1", text: "SELECT 1", values: [] } as any);
  const t3 = performance.now();
  if (i >= 500) { tc += t1 - t0; tk += t2 - t1; tr += t3 - t2; }
}
console.log({ claimMs: tc / 1000, completeMs: tk / 1000, select1Ms: tr / 1000 });
const c = await import("pg");
const cl = new c.default.Client({ connectionString: tdb.url }); await cl.connect();
const r = await cl.query(`EXPLAIN (ANALYZE, FORMAT JSON) SELECT 1`);
await cl.end();
await db.close(); await tdb.drop();
