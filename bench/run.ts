// npm run bench [-- --quick] [--db sqlite|postgres] [--concurrency N] [--keywords N]
//
// Claims/s and page reports/s through the whole stack (HTTP + GraphQL + state machine + database),
// each next to a baseline measured in the same run on the same machine:
//   - the storage floor: the same writes done in-process on the raw driver (better-sqlite3 / pg),
//     one transaction per operation, no GraphQL, no HTTP;
//   - the HTTP + GraphQL floor: a bare Yoga server answering a no-op mutation.
// Prints a table with the ratios and writes bench/results.json. Never asserts a speed.
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Command, InvalidArgumentError } from "commander";
import BetterSqlite3 from "better-sqlite3";
import pg from "pg";
import { pino } from "pino";
import { createSchema, createYoga } from "graphql-yoga";
import { buildApp } from "../server/src/app.ts";
import { createToken, Role } from "../server/src/auth/tokens.ts";
import { crossProduct, importKeywords } from "../server/src/keywords/import.ts";
import { migrate } from "../server/src/db/migrate.ts";
import { createTestDatabase } from "../server/test/databases.ts";

const int = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("must be a positive integer");
  return n;
};

const opts = new Command("bench")
  .option("--quick", "a small, fast run (used by the test suite)")
  .option("--db <provider>", "sqlite or postgres", "sqlite")
  .option("--concurrency <n>", "concurrent clients", int, 32)
  .option("--keywords <n>", "keywords to claim", int)
  .option("--pages <n>", "pages reported per keyword", int)
  .option("--out <file>", "where to write the results", "bench/results.json")
  .parse()
  .opts<{ quick?: boolean; db: string; concurrency: number; keywords?: number; pages?: number; out: string }>();

if (opts.db !== "sqlite" && opts.db !== "postgres") throw new InvalidArgumentError("--db must be sqlite or postgres");
const KEYWORDS = opts.keywords ?? (opts.quick ? 200 : 4000);
const PAGES = opts.pages ?? (opts.quick ? 2 : 5);
const C = opts.concurrency;

interface Row {
  what: string;
  ops: number;
  seconds: number;
  perSecond: number;
}
const rows: Row[] = [];

function progress(label: string, done: number, total: number) {
  if (!process.stderr.isTTY) return;
  const width = 30;
  const filled = Math.round((done / total) * width);
  process.stderr.write(`\r${label.padEnd(34)} [${"#".repeat(filled)}${".".repeat(width - filled)}] ${done}/${total}`);
  if (done === total) process.stderr.write("\n");
}

/** Run `total` operations with `concurrency` workers; records ops/s. */
async function measure(what: string, total: number, concurrency: number, op: (i: number) => Promise<void>) {
  let next = 0;
  let done = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < total; i = next++) {
        await op(i);
        done++;
        if (done % 50 === 0 || done === total) progress(what, done, total);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const row = { what, ops: total, seconds, perSecond: total / seconds };
  rows.push(row);
  return row;
}

async function post(url: string, token: string | null, query: string, variables: Record<string, unknown>) {
  const r = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await r.json()) as { data?: any; errors?: unknown[] };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

const freshDatabase = () => createTestDatabase(opts.db as "sqlite" | "postgres");

/** The whole stack: claims then page reports over HTTP. */
async function benchStack() {
  const db = await freshDatabase();
  const app = await buildApp({
    config: { DATABASE_URL: db.url, LOG_LEVEL: "silent" },
    logger: pino({ level: "silent" }),
    scheduler: false,
  });
  await app.start(0, "127.0.0.1");
  const database = app.services.database;
  await importKeywords(database, "qcwy", crossProduct(Array.from({ length: KEYWORDS }, (_, i) => `city${i}`), ["bench"]));
  const { token } = await createToken(database, Role.SPIDER, "bench");
  const url = app.url();

  const leases: { id: string; lease: string }[] = [];
  const claim = `mutation($c: String!) { claimKeywords(source: "qcwy", crawlerId: $c, limit: 1) { keyword { id } leaseToken } }`;
  await measure(`claims/s (HTTP, C=${C}, 1 per request)`, KEYWORDS, C, async (i) => {
    const d = await post(url, token, claim, { c: `bench-${i % C}` });
    const c = d.claimKeywords[0];
    leases.push({ id: c.keyword.id, lease: c.leaseToken });
  });

  const report = `mutation($i: ReportPageProgressInput!) { reportPageProgress(input: $i) { id } }`;
  await measure(`page reports/s (HTTP, C=${C})`, KEYWORDS * PAGES, C, async (i) => {
    const l = leases[i % leases.length]!;
    const page = Math.floor(i / leases.length) + 1;
    await post(url, token, report, { i: { keywordId: l.id, leaseToken: l.lease, page, totalPages: 50, jobsFound: 10 } });
  });

  await app.stop();
  await db.drop();
}

/** The storage floor: the same writes on the raw driver, in-process. */
async function benchRawSqlite() {
  const db = await freshDatabase();
  await migrate(db.url);
  const sql = new BetterSqlite3(db.url.replace(/^file:/, ""));
  sql.pragma("journal_mode = WAL");
  sql.pragma("synchronous = NORMAL");
  const now = () => new Date().toISOString();
  sql.prepare(`INSERT INTO "Source" (id, name, maxPages, updatedAt) VALUES ('qcwy', 'qcwy', 50, ?)`).run(now());
  const ins = sql.prepare(`INSERT INTO "Keyword" (sourceId, city, job, createdAt, updatedAt) VALUES ('qcwy', ?, 'bench', ?, ?)`);
  sql.transaction(() => {
    for (let i = 0; i < KEYWORDS; i++) ins.run(`city${i}`, now(), now());
  })();
  const claimStmt = sql.prepare(`UPDATE "Keyword" SET status = 'CRAWLING', crawlDate = ?, lastRequestedAt = ?, heartbeatAt = ?,
      leaseToken = ?, crawlerId = ?, version = version + 1, updatedAt = ?
    WHERE id = (SELECT id FROM "Keyword" WHERE sourceId = 'qcwy' AND (crawlDate IS NULL OR crawlDate <> ?)
                ORDER BY lastRequestedAt ASC NULLS FIRST, id ASC LIMIT 1) RETURNING id`);
  const event = sql.prepare(`INSERT INTO "CrawlEvent" (keywordId, sourceId, crawlDate, "from", "to", reason, crawlerId, at)
    VALUES (?, 'qcwy', ?, 'IDLE', 'CRAWLING', 'claim', ?, ?)`);
  // The day's counters, as the store keeps them (one upsert per transaction).
  const counter = sql.prepare(`INSERT INTO "CrawlCounter" (sourceId, crawlDate, status, shard, keywords, jobsFound, pagesCrawled)
    VALUES ('qcwy', '2099-01-01', 'CRAWLING', ?, ?, ?, ?) ON CONFLICT (sourceId, crawlDate, status, shard) DO UPDATE SET
    keywords = keywords + excluded.keywords, jobsFound = jobsFound + excluded.jobsFound, pagesCrawled = pagesCrawled + excluded.pagesCrawled`);
  const claimTx = sql.transaction((i: number) => {
    const t = now();
    const row = claimStmt.get("2099-01-01", t, t, `lease${i}`, "raw", t, "2099-01-01") as { id: number };
    event.run(row.id, "2099-01-01", "raw", t);
    counter.run(row.id % 16, 1, 0, 0);
    return row.id;
  });
  const ids: number[] = [];
  await measure("claims/s (raw driver, in-process)", KEYWORDS, 1, async (i) => {
    ids.push(claimTx(i) as number);
  });
  const upsert = sql.prepare(`INSERT INTO "PageReport" (keywordId, sourceId, crawlDate, page, jobsFound, crawlerId, reportedAt)
    VALUES (?, 'qcwy', ?, ?, ?, 'raw', ?) ON CONFLICT (keywordId, crawlDate, page) DO UPDATE SET jobsFound = excluded.jobsFound`);
  const progressStmt = sql.prepare(`UPDATE "Keyword" SET lastCompletedPage = max(lastCompletedPage, ?), jobsFound = jobsFound + ?,
      pagesCrawled = pagesCrawled + 1, heartbeatAt = ?, version = version + 1, updatedAt = ? WHERE id = ? AND leaseToken IS NOT NULL`);
  const reportTx = sql.transaction((id: number, page: number) => {
    const t = now();
    upsert.run(id, "2099-01-01", page, 10, t);
    progressStmt.run(page, 10, t, t, id);
    counter.run(id % 16, 0, 10, 1);
  });
  await measure("page reports/s (raw driver, in-process)", KEYWORDS * PAGES, 1, async (i) => {
    reportTx(ids[i % ids.length]!, Math.floor(i / ids.length) + 1);
  });
  sql.close();
  await db.drop();
}

const PG_COUNTER = `INSERT INTO "CrawlCounter" ("sourceId", "crawlDate", status, shard, keywords, "jobsFound", "pagesCrawled")
  VALUES ('qcwy', '2099-01-01', 'CRAWLING', $1, $2, $3, $4) ON CONFLICT ("sourceId", "crawlDate", status, shard) DO UPDATE SET
  keywords = "CrawlCounter".keywords + excluded.keywords, "jobsFound" = "CrawlCounter"."jobsFound" + excluded."jobsFound",
  "pagesCrawled" = "CrawlCounter"."pagesCrawled" + excluded."pagesCrawled"`;

async function benchRawPostgres() {
  const db = await freshDatabase();
  await migrate(db.url);
  const pool = new pg.Pool({ connectionString: db.url, max: 20 });
  pool.on("error", () => {}); // connections terminated when the bench database is dropped
  await pool.query(`INSERT INTO "Source" (id, name, "maxPages", "updatedAt") VALUES ('qcwy', 'qcwy', 50, now())`);
  await pool.query(`INSERT INTO "Keyword" ("sourceId", city, job, "updatedAt") SELECT 'qcwy', 'city' || g, 'bench', now() FROM generate_series(1, $1) g`, [KEYWORDS]);
  const ids: number[] = [];
  await measure(`claims/s (raw driver, C=${C})`, KEYWORDS, C, async (i) => {
    const c = await pool.connect();
    try {
      await c.query("BEGIN");
      const r = await c.query(`UPDATE "Keyword" SET status = 'CRAWLING', "crawlDate" = '2099-01-01', "lastRequestedAt" = now(),
          "heartbeatAt" = now(), "leaseToken" = $1, "crawlerId" = 'raw', version = version + 1, "updatedAt" = now()
        WHERE id = (SELECT id FROM "Keyword" WHERE "sourceId" = 'qcwy' AND ("crawlDate" IS NULL OR "crawlDate" <> '2099-01-01')
                    ORDER BY "lastRequestedAt" ASC NULLS FIRST, id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id`, [`lease${i}`]);
      await c.query(`INSERT INTO "CrawlEvent" ("keywordId", "sourceId", "crawlDate", "from", "to", reason, "crawlerId", at)
        VALUES ($1, 'qcwy', '2099-01-01', 'IDLE', 'CRAWLING', 'claim', 'raw', now())`, [r.rows[0].id]);
      await c.query(PG_COUNTER, [r.rows[0].id % 16, 1, 0, 0]);
      await c.query("COMMIT");
      ids.push(r.rows[0].id);
    } finally {
      c.release();
    }
  });
  await measure(`page reports/s (raw driver, C=${C})`, KEYWORDS * PAGES, C, async (i) => {
    const id = ids[i % ids.length]!;
    const page = Math.floor(i / ids.length) + 1;
    const c = await pool.connect();
    try {
      await c.query("BEGIN");
      await c.query(`INSERT INTO "PageReport" ("keywordId", "sourceId", "crawlDate", page, "jobsFound", "crawlerId", "reportedAt")
        VALUES ($1, 'qcwy', '2099-01-01', $2, 10, 'raw', now()) ON CONFLICT ("keywordId", "crawlDate", page) DO UPDATE SET "jobsFound" = excluded."jobsFound"`, [id, page]);
      await c.query(`UPDATE "Keyword" SET "lastCompletedPage" = greatest("lastCompletedPage", $1), "jobsFound" = "jobsFound" + 10,
        "pagesCrawled" = "pagesCrawled" + 1, "heartbeatAt" = now(), version = version + 1 WHERE id = $2`, [page, id]);
      await c.query(PG_COUNTER, [id % 16, 0, 10, 1]);
      await c.query("COMMIT");
    } finally {
      c.release();
    }
  });
  await pool.end();
  await db.drop();
}

/** The HTTP + GraphQL floor: a bare Yoga answering a no-op mutation. */
async function benchBareYoga() {
  const yoga = createYoga({
    schema: createSchema({
      typeDefs: `type Query { ok: Boolean } type Mutation { noop(n: Int): Boolean }`,
      resolvers: { Mutation: { noop: () => true } },
    }),
    logging: false,
  });
  const server = createServer(yoga);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
  await measure(`no-op mutations/s (bare Yoga, C=${C})`, KEYWORDS * PAGES, C, async (i) => {
    await post(url, null, `mutation($n: Int) { noop(n: $n) }`, { n: i });
  });
  await new Promise((r) => server.close(r));
}

console.error(`bench: ${opts.db}, ${KEYWORDS} keywords × ${PAGES} pages, concurrency ${C}${opts.quick ? " (quick)" : ""}`);
await benchBareYoga();
if (opts.db === "sqlite") await benchRawSqlite();
else await benchRawPostgres();
await benchStack();

const get = (prefix: string) => rows.find((r) => r.what.startsWith(prefix))!.perSecond;
const ratios = {
  "claims vs raw driver": get("claims/s (HTTP") / get("claims/s (raw"),
  "reports vs raw driver": get("page reports/s (HTTP") / get("page reports/s (raw"),
  "reports vs bare Yoga no-op": get("page reports/s (HTTP") / get("no-op"),
  "claims vs bare Yoga no-op": get("claims/s (HTTP") / get("no-op"),
};

const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(2));
console.log(`\n| measurement | ops | seconds | per second |\n|---|---:|---:|---:|`);
for (const r of rows) console.log(`| ${r.what} | ${r.ops} | ${r.seconds.toFixed(2)} | ${fmt(r.perSecond)} |`);
console.log(`\n| ratio | value |\n|---|---:|`);
for (const [k, v] of Object.entries(ratios)) console.log(`| ${k} | ${v.toFixed(3)}× |`);

const results = {
  at: new Date().toISOString(),
  node: process.version,
  db: opts.db,
  keywords: KEYWORDS,
  pages: PAGES,
  concurrency: C,
  quick: Boolean(opts.quick),
  rows,
  ratios,
};
mkdirSync(join(opts.out, ".."), { recursive: true });
writeFileSync(opts.out, `${JSON.stringify(results, null, 2)}\n`);
console.error(`\nwrote ${opts.out}`);
