import { createTestDatabase } from "/work/main/server/test/databases.ts";
import { migrate } from "/work/main/server/src/db/migrate.ts";
import { openDatabase } from "/work/main/server/src/db/client.ts";
import { seedSources } from "/work/main/server/src/db/seed.ts";
import { CrawlStore } from "/work/main/server/src/crawl/store.ts";
import { CrawlCalendar, systemClock } from "/work/main/server/src/crawl/crawl-day.ts";
import { importKeywords, crossProduct } from "/work/main/server/src/keywords/import.ts";
import { CrawlStatus } from "/work/main/server/src/crawl/rules.ts";
const provider = (process.argv[2] ?? "sqlite") as "sqlite" | "postgres";
const tdb = await createTestDatabase(provider);
await migrate(tdb.url);
const db = await openDatabase(tdb.url);
await seedSources(db);
await importKeywords(db, "qcwy", crossProduct(Array.from({ length: 20000 }, (_, i) => `c${i}`), ["b"]));
const store = new CrawlStore(db, new CrawlCalendar(systemClock, "Asia/Shanghai"));
let tc = 0, tk = 0, n = 0;
for (let i = 0; i < 300; i++) {
  const t0 = performance.now();
  const ks = await store.claim("qcwy", "p", 32);
  const t1 = performance.now();
  await store.completeMany(ks.map((k) => ({ keywordId: k.keyword.id, leaseToken: k.leaseToken, status: CrawlStatus.COMPLETED })));
  const t2 = performance.now();
  if (i >= 50) { tc += t1 - t0; tk += t2 - t1; n++; }
}
console.log(provider, { claim32Ms: tc / n, complete32Ms: tk / n, perKeywordUs: ((tc + tk) / n / 32) * 1000 });
await db.close(); await tdb.drop();
