import pg from "pg";
import { createTestDatabase } from "/work/main/server/test/databases.ts";
import { migrate } from "/work/main/server/src/db/migrate.ts";
import { openDatabase } from "/work/main/server/src/db/client.ts";
import { seedSources } from "/work/main/server/src/db/seed.ts";
import * as sql from "/work/main/server/src/crawl/sql.ts";
import { importKeywords, crossProduct } from "/work/main/server/src/keywords/import.ts";
const tdb = await createTestDatabase("postgres");
await migrate(tdb.url);
const db = await openDatabase(tdb.url);
await seedSources(db);
await importKeywords(db, "qcwy", crossProduct(Array.from({ length: 3000 }, (_, i) => `c${i}`), ["b"]));
let captured: any;
const fake = { query: async (s: any) => { captured = s; return []; }, execute: async () => 0 };
const now = new Date();
await sql.claimPostgres(fake as any, { sourceId: "qcwy", crawlerId: "x", today: "2026-11-30", todayStart: new Date(Date.now() - 3600e3), now, take: 1, tokens: ["t"] });
const cl = new pg.Client({ connectionString: tdb.url }); await cl.connect();
const vals = captured.values.map((v: any) => (v instanceof Date ? v.toISOString() : v));
for (let i = 0; i < 3; i++) {
  const r = await cl.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${captured.text}`, vals);
  const p = r.rows[0]["QUERY PLAN"][0];
  console.log("claim planning", p["Planning Time"], "execution", p["Execution Time"]);
  if (i === 2) { const walk = (n: any, d = 0) => { console.log(" ".repeat(d) + n["Node Type"], n["Relation Name"] ?? n["CTE Name"] ?? "", n["Index Name"] ?? "", "rows", n["Actual Rows"], "time", n["Actual Total Time"], "loops", n["Actual Loops"], n["Filter"] ?? "", n["Rows Removed by Filter"] ?? ""); for (const c of n.Plans ?? []) walk(c, d + 2); }; walk(p.Plan); }
}
await sql.writeLeasedPostgres(fake as any, { id: 5, leaseToken: "t", today: "2026-11-30", now, patch: { status: "COMPLETED" as any, heartbeatAt: now }, to: "COMPLETED" as any, reason: "complete" });
const v2 = captured.values.map((v: any) => (v instanceof Date ? v.toISOString() : v));
for (let i = 0; i < 3; i++) {
  const r = await cl.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${captured.text}`, v2);
  const p = r.rows[0]["QUERY PLAN"][0];
  console.log("complete planning", p["Planning Time"], "execution", p["Execution Time"]);
}
await cl.end(); await db.close(); await tdb.drop();
