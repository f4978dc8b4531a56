// npm run bench [-- --quick] [--only reports,cycles,batch,scale,fanout] [--db sqlite|postgres|both] …
//
// Every figure next to its baselines, measured in the same run on the same machine. The HTTP load
// generator runs in a child process of its own (bench/load.ts), as spiders do; in-process figures
// call the store directly. Sections (`--only` picks some):
//   reports  page reports/s (and claims/s) through the whole stack over HTTP at C=32, vs a bare
//            Yoga server answering a no-op mutation (the HTTP + GraphQL floor) and vs the same
//            writes in-process on the raw driver (the storage floor);
//   cycles   claim (limit 1) → reportCrawlComplete cycles/s over HTTP at C=1, 8, 32 — two requests
//            per cycle, and pipelined: one request holding the completion and the next claim (the
//            SDK's CompleteAndClaim) — and the same cycles in-process through the crawl store, vs
//            pg-boss fetch + complete (in-process, as pg-boss is used; and behind a bare Yoga, both
//            ways) on the same PostgreSQL server at the same concurrency;
//   batch    claim (limit 32) → reportCrawlsComplete (32 inputs) at C=8, keywords cycled/s (two
//            requests per batch, and pipelined), vs BullMQ processing no-op jobs on Redis at
//            concurrency 8;
//   scale    claim and stats latency p50/p99 at 10k, 100k, 1M keywords, and the day rollover of
//            all of them (bench/scale.ts);
//   stalls   SQLite under a sustained write load (page reports in-process, C=32): call latency and
//            the event loop's longest stall with the WAL checkpointed on a thread of its own vs by
//            the commit that fills it (SQLite's default; bench/stalls.ts);
//   fanout   1,000 graphql-ws subscribers to crawlStatusDistribution, a burst of page reports:
//            messages delivered, time until every subscriber has the final counts, and the most
//            distribution events any subscriber got in one second.
// Prints the tables with the ratios (and the goals) and writes bench/results.json. Never asserts
// a speed.
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { loadavg } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Command, InvalidArgumentError } from "commander";
import BetterSqlite3 from "better-sqlite3";
import pg from "pg";
import { pino } from "pino";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { createSchema, createYoga } from "graphql-yoga";
import { buildApp } from "../server/src/app.ts";
import { createToken, Role } from "../server/src/auth/tokens.ts";
import { crossProduct, importKeywords } from "../server/src/keywords/import.ts";
import { migrate } from "../server/src/db/migrate.ts";
import { CrawlStatus } from "../server/src/crawl/rules.ts";
import { createTestDatabase, postgresUnavailable } from "../server/test/databases.ts";
import { LoadGenerator, noItemErrors, times } from "./load.ts";
import { bullmqCycles, pgBossCycles } from "./peers.ts";
import { post } from "./post.ts";
import { rolloverPerKeyword, runScale, type ScaleRow, scaleTable, worstP50 } from "./scale.ts";
import { runStalls, type StallRow, stallsTable } from "./stalls.ts";

const int = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("must be a positive integer");
  return n;
};
const SECTIONS = ["reports", "cycles", "batch", "scale", "stalls", "fanout"] as const;
type Section = (typeof SECTIONS)[number];

const opts = new Command("bench")
  .option("--quick", "a small, fast run of every section (used by the test suite)")
  .option("--only <sections>", `comma-separated subset of ${SECTIONS.join(",")}`)
  .option("--db <provider>", "sqlite, postgres or both (both: PostgreSQL when it answers)", "both")
  .option("--concurrency <n>", "concurrent clients for page reports", int, 32)
  .option("--keywords <n>", "keywords claimed for the page-report run", int)
  .option("--pages <n>", "pages reported per keyword", int)
  .option("--cycles <n>", "claim → complete cycles per concurrency level", int)
  .option("--batch-keywords <n>", "keywords cycled in the batched run", int)
  .option("--batch-warm <n>", "keywords (BullMQ: jobs) cycled first in the batched run, not counted", int)
  .option("--sizes <list>", "keyword counts for the scale section", "10000,100000,1000000")
  .option("--stall-seconds <n>", "seconds of writes per checkpoint mode in the stalls section", int)
  .option("--subscribers <n>", "graphql-ws subscribers in the fan-out section", int)
  .option("--redis <url>", "Redis for BullMQ", process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379")
  .option("--out <file>", "where to write the results", "bench/results.json")
  .parse()
  .opts<{
    quick?: boolean; only?: string; db: string; concurrency: number; keywords?: number; pages?: number; cycles?: number;
    batchKeywords?: number; batchWarm?: number; sizes: string; stallSeconds?: number; subscribers?: number; redis: string; out: string;
  }>();

const quick = Boolean(opts.quick);
const sections = new Set<Section>(
  (opts.only?.split(",").map((x) => x.trim()) ?? [...SECTIONS]).map((x) => {
    if (!(SECTIONS as readonly string[]).includes(x)) throw new InvalidArgumentError(`--only: unknown section ${x}`);
    return x as Section;
  }),
);
if (!["sqlite", "postgres", "both"].includes(opts.db)) throw new InvalidArgumentError("--db must be sqlite, postgres or both");
const KEYWORDS = opts.keywords ?? (quick ? 100 : 2000);
const PAGES = opts.pages ?? (quick ? 2 : 6);
/** Pages of every lease reported per round of the alternating page-report / bare-Yoga rounds. */
const PAGES_PER_ROUND = quick ? 1 : 2;
const C = opts.concurrency;
const CYCLES = opts.cycles ?? (quick ? 40 : 1000);
const BATCH_KEYWORDS = opts.batchKeywords ?? (quick ? 256 : 16384);
/** Keywords (jobs) each batched run and BullMQ cycle first, not counted: the JIT sees every path before the timed run. */
const BATCH_WARM = opts.batchWarm ?? (quick ? 64 : 2048);
const SIZES = quick ? [500, 1000] : opts.sizes.split(",").map(Number);
const SCALE_SAMPLES = quick ? 10 : 300;
const SUBSCRIBERS = opts.subscribers ?? (quick ? 20 : 1000);
const STALL_SECONDS = opts.stallSeconds ?? (quick ? 1 : 15);
type Provider = "sqlite" | "postgres";

const pgMissing = await postgresUnavailable();
const providers: Provider[] =
  opts.db === "both" ? (pgMissing ? ["sqlite"] : ["sqlite", "postgres"]) : [opts.db as Provider];
if (opts.db === "postgres" && pgMissing) throw new Error(pgMissing);
const DB_LABEL = { sqlite: "SQLite", postgres: "PostgreSQL" } as const;

interface Row {
  what: string;
  ops: number;
  seconds: number;
  perSecond: number;
}
const rows: Row[] = [];

/** The HTTP clients, in a process of their own. */
const load = new LoadGenerator();

const record = (what: string, ops: number, seconds: number) => {
  const row = { what, ops, seconds, perSecond: ops / seconds };
  rows.push(row);
  return row;
};

/** Run `total` operations with `concurrency` workers in this process; records ops/s. */
async function measure(what: string, total: number, concurrency: number, op: (i: number) => Promise<void>) {
  const r = await times(what, total, concurrency, op);
  return record(what, r.ops, r.seconds);
}

/** Workers loop `op` until one returns 0 (nothing left); records the sum of what they returned per second. */
/** `concurrency` workers each call `op` until it returns 0; what they did in all, and how long it took. */
async function workersInProcess(concurrency: number, op: (worker: number) => Promise<number>) {
  let done = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      for (let n = await op(w); n > 0; n = await op(w)) done += n;
    }),
  );
  return { done, seconds: (performance.now() - t0) / 1000 };
}

async function drain(what: string, concurrency: number, op: (worker: number) => Promise<number>) {
  const { done, seconds } = await workersInProcess(concurrency, op);
  return record(what, done, seconds);
}

/** The whole server on a fresh database with `keywords` keywords of source qcwy, and a spider token. */
async function startStack(provider: Provider, keywords: number, config: Record<string, unknown> = {}) {
  const db = await createTestDatabase(provider);
  const app = await buildApp({
    config: { DATABASE_URL: db.url, LOG_LEVEL: "silent", ...config },
    logger: pino({ level: "silent" }),
    scheduler: false,
  });
  await app.start(0, "127.0.0.1");
  const database = app.services.database;
  // In imports of at most 100000 keywords (the import's own limit).
  for (let i = 0; i < keywords; i += 100_000) {
    await importKeywords(database, "qcwy", crossProduct(Array.from({ length: Math.min(100_000, keywords - i) }, (_, j) => `city${i + j}`), ["bench"]));
  }
  const { token } = await createToken(database, Role.SPIDER, "bench");
  return {
    app,
    url: app.url(),
    token,
    async stop() {
      await app.stop();
      await db.drop();
    },
  };
}

const CLAIM = `mutation($c: String!, $n: Int!) { claimKeywords(source: "qcwy", crawlerId: $c, limit: $n) { keyword { id } leaseToken } }`;
const REPORT = `mutation($i: ReportPageProgressInput!) { reportPageProgress(input: $i) { id } }`;

/** The storage floor: the same writes on the raw driver, in-process. */
async function benchRawSqlite() {
  const db = await createTestDatabase("sqlite");
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
  await measure("claims/s (SQLite, raw driver, in-process)", KEYWORDS, 1, async (i) => {
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
  await measure("page reports/s (SQLite, raw driver, in-process)", KEYWORDS * PAGES, 1, async (i) => {
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
  const db = await createTestDatabase("postgres");
  await migrate(db.url);
  const pool = new pg.Pool({ connectionString: db.url, max: 20 });
  pool.on("error", () => {}); // connections terminated when the bench database is dropped
  await pool.query(`INSERT INTO "Source" (id, name, "maxPages", "updatedAt") VALUES ('qcwy', 'qcwy', 50, now())`);
  await pool.query(`INSERT INTO "Keyword" ("sourceId", city, job, "updatedAt") SELECT 'qcwy', 'city' || g, 'bench', now() FROM generate_series(1, $1) g`, [KEYWORDS]);
  const ids: number[] = [];
  await measure(`claims/s (PostgreSQL, raw driver, C=${C})`, KEYWORDS, C, async (i) => {
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
  await measure(`page reports/s (PostgreSQL, raw driver, C=${C})`, KEYWORDS * PAGES, C, async (i) => {
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

/**
 * The whole stack over HTTP — claims, then page reports — beside the HTTP + GraphQL floor, a bare
 * Yoga answering a no-op mutation. The page reports and the no-op run in alternating rounds (pages
 * 1–2 of every lease, then 3–4, …), so that both see the same machine; the first round of each
 * warms the JIT and is not counted.
 */
async function benchReports(provider: Provider) {
  const yoga = createYoga({
    schema: createSchema({
      typeDefs: `type Query { ok: Boolean } type Mutation { noop(n: Int): Boolean }`,
      resolvers: { Mutation: { noop: () => true } },
    }),
    logging: false,
  });
  const server = createServer(yoga);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const bareUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
  const s = await startStack(provider, KEYWORDS);
  const L = DB_LABEL[provider];
  const target = { url: s.url, token: s.token, concurrency: C };
  const claims = `claims/s (${L}, HTTP, C=${C}, 1 per request)`;
  const c = await load.run("claims", { ...target, label: claims, n: KEYWORDS });
  record(claims, c.ops, c.seconds);
  const rounds = Math.ceil(PAGES / PAGES_PER_ROUND);
  const bare = { ops: 0, seconds: 0 };
  const reports = { ops: 0, seconds: 0 };
  for (let r = 0; r < rounds; r++) {
    const pages = Math.min(PAGES_PER_ROUND, PAGES - r * PAGES_PER_ROUND);
    const b = await load.run("noop", { label: `bare Yoga no-op, round ${r + 1}/${rounds}`, url: bareUrl, token: null, concurrency: C, n: KEYWORDS * pages });
    const p = await load.run("reports", { ...target, label: `page reports, round ${r + 1}/${rounds}`, n: KEYWORDS * pages, firstPage: r * PAGES_PER_ROUND + 1 });
    if (r === 0 && rounds > 1) continue; // warm-up
    for (const [sum, x] of [[bare, b], [reports, p]] as const) {
      sum.ops += x.ops;
      sum.seconds += x.seconds;
    }
  }
  record(`no-op mutations/s (bare Yoga, C=${C}, beside ${L})`, bare.ops, bare.seconds);
  record(`page reports/s (${L}, HTTP, C=${C})`, reports.ops, reports.seconds);
  await s.stop();
  await new Promise((r) => server.close(r));
}

/**
 * One keyword per request: claim (limit 1) → reportCrawlComplete over HTTP (two requests per cycle,
 * and pipelined: one), in-process through the crawl store, and pg-boss fetch → complete, level by
 * level (each level's figures side by side).
 */
async function benchCycles(levels: number[]) {
  const stacks = new Map<Provider, Awaited<ReturnType<typeof startStack>>>();
  const WARM = Math.min(100, CYCLES);
  for (const p of providers) stacks.set(p, await startStack(p, CYCLES * levels.length * 3 + 2 * WARM));
  const bossDb = providers.includes("postgres") ? await createTestDatabase("postgres") : null;
  const remote = async (label: string, args: Omit<Parameters<typeof load.run<"cycles">>[1], "label">) => {
    const r = await load.run("cycles", { ...args, label });
    record(label, r.ops, r.seconds);
  };
  try {
    // Warm-up, not counted: the JIT has seen every path before the first level is timed.
    for (const s of stacks.values()) {
      for (const pipelined of [false, true]) {
        await load.run("cycles", { label: "warm-up", url: s.url, token: s.token, concurrency: 4, n: WARM, per: 1, pipelined, tag: "warm" });
      }
    }
    if (bossDb) {
      await pgBossCycles(bossDb.url, WARM, 4);
      await pgBossCycles(bossDb.url, WARM, 4, (url, queue) => load.run("pgboss", { label: "warm-up", url, token: null, concurrency: 4, queue, pipelined: true }));
    }
    for (const c of levels) {
      for (const [p, s] of stacks) {
        const target = { url: s.url, token: s.token, concurrency: c, n: CYCLES, per: 1 };
        await remote(`claim→complete cycles/s (${DB_LABEL[p]}, HTTP, C=${c})`, { ...target, pipelined: false, tag: `cycle-${c}` });
        await remote(`claim→complete cycles/s (${DB_LABEL[p]}, HTTP pipelined, C=${c})`, { ...target, pipelined: true, tag: `piped-${c}` });
        const store = s.app.services.store;
        let left = CYCLES;
        await drain(`claim→complete cycles/s (${DB_LABEL[p]}, in-process store, C=${c})`, c, async (w) => {
          if (left-- <= 0) return 0;
          const [k] = await store.claim("qcwy", `store-${c}-${w}`, 1);
          if (!k) return 0;
          await store.complete({ keywordId: k.keyword.id, leaseToken: k.leaseToken, status: CrawlStatus.COMPLETED });
          return 1;
        });
      }
      if (bossDb) {
        const r = await pgBossCycles(bossDb.url, CYCLES, c);
        record(`pg-boss fetch→complete/s (PostgreSQL, C=${c})`, r.ops, r.seconds);
        for (const pipelined of [false, true]) {
          const label = `pg-boss fetch→complete/s over HTTP${pipelined ? " pipelined" : ""} (bare Yoga in front, PostgreSQL, C=${c})`;
          const h = await pgBossCycles(bossDb.url, CYCLES, c, (url, queue) => load.run("pgboss", { label, url, token: null, concurrency: c, queue, pipelined }));
          record(label, h.ops, h.seconds);
        }
      }
    }
  } finally {
    for (const s of stacks.values()) await s.stop();
    await bossDb?.drop();
  }
}

/** Batched: claim (limit 32) → reportCrawlsComplete with 32 inputs, 8 clients; keywords cycled/s. */
async function benchBatch(provider: Provider) {
  const s = await startStack(provider, (BATCH_KEYWORDS + BATCH_WARM) * 4);
  const batches = Math.ceil(BATCH_KEYWORDS / 32);
  const L = DB_LABEL[provider];
  const target = { url: s.url, token: s.token, concurrency: 8, per: 32 };
  const variants = [
    [`batched claim→complete keywords/s (${L}, HTTP, C=8, 32 per request)`, { pipelined: false, tag: "batch" }],
    [`batched claim→complete keywords/s (${L}, HTTP pipelined, C=8, 32 per request)`, { pipelined: true, tag: "piped" }],
    [`batched claim→page→complete keywords/s (${L}, HTTP, C=8, 32 per request)`, { pipelined: false, report: true, tag: "paged" }],
  ] as const;
  // The same batches through the crawl store in-process, as the BullMQ worker runs.
  const store = s.app.services.store;
  const inProcess = (n: number) => async (w: number) => {
    if (n-- <= 0) return 0;
    const claims = await store.claim("qcwy", `store-batch-${w}`, 32);
    const results = await store.completeMany(claims.map((k) => ({ keywordId: k.keyword.id, leaseToken: k.leaseToken, status: CrawlStatus.COMPLETED })));
    noItemErrors(results);
    return claims.length;
  };
  // Warm-up, not counted (as BullMQ's in benchBullmq).
  const warm = Math.ceil(BATCH_WARM / 32);
  for (const [, extra] of variants) await load.run("cycles", { ...target, ...extra, n: warm, label: "warm-up", tag: `warm-${extra.tag}` });
  await workersInProcess(8, inProcess(warm));
  for (const [label, extra] of variants) {
    const r = await load.run("cycles", { ...target, ...extra, n: batches, label });
    record(label, r.ops, r.seconds);
  }
  await drain(`batched claim→complete keywords/s (${L}, in-process store, C=8, 32 per call)`, 8, inProcess(batches));
  await s.stop();
}

async function benchBullmq(beside: Provider) {
  await bullmqCycles(opts.redis, BATCH_WARM, 8); // warm-up, not counted
  const r = await bullmqCycles(opts.redis, BATCH_KEYWORDS, 8);
  record(`BullMQ no-op jobs/s (Redis, concurrency 8, beside ${DB_LABEL[beside]})`, r.ops, r.seconds);
}

async function redisAnswers(url: string) {
  const { Redis } = await import("ioredis");
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await r.connect();
    return (await r.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

interface Fanout {
  provider: Provider;
  subscribers: number;
  reports: number;
  messagesDelivered: number;
  secondsUntilAllFinal: number;
  burstSeconds: number;
  maxEventsPerSecond: number;
  throttleMs: number;
}

/** 1,000 subscribers to crawlStatusDistribution, then a burst of page reports. */
async function benchFanout(provider: Provider): Promise<Fanout> {
  const keywords = quick ? 20 : 400;
  const pages = quick ? 2 : 5;
  const s = await startStack(provider, keywords);
  const throttleMs = s.app.services.config.DISTRIBUTION_THROTTLE_MS;
  const { token: viewer } = await createToken(s.app.services.database, Role.VIEWER, "bench-viewer");
  const leases: { keyword: { id: string }; leaseToken: string }[] = [];
  while (leases.length < keywords) {
    const more = (await post(s.url, s.token, CLAIM, { c: "fanout", n: 100 })).claimKeywords;
    if (!more.length) break;
    leases.push(...more);
  }
  const reports = leases.length * pages;
  const finalJobs = reports * 10;
  const subs = Array.from({ length: SUBSCRIBERS }, () => ({ times: [] as number[], last: null as any }));
  const clients = subs.map(() =>
    createClient({
      url: s.url.replace(/^http/, "ws"),
      webSocketImpl: WebSocket,
      connectionParams: { Authorization: `Bearer ${viewer}` },
      retryAttempts: 0,
      lazy: true,
    }),
  );
  let ready = 0;
  let allFinal: () => void = () => {};
  const final = new Promise<void>((r) => (allFinal = r));
  let finals = 0;
  let firstSeen: () => void = () => {};
  const allSubscribed = new Promise<void>((r) => (firstSeen = r));
  const stops = clients.map((client, i) =>
    client.subscribe(
      { query: `subscription { crawlStatusDistribution(source: "qcwy") { jobsFound pagesCrawled } }` },
      {
        next: (m) => {
          const sub = subs[i]!;
          const d = (m.data as any)?.crawlStatusDistribution;
          if (!sub.last) {
            if (++ready === SUBSCRIBERS) firstSeen();
          } else sub.times.push(performance.now());
          const wasFinal = sub.last?.jobsFound === finalJobs;
          sub.last = d;
          if (!wasFinal && d.jobsFound === finalJobs && d.pagesCrawled === reports && ++finals === SUBSCRIBERS) allFinal();
        },
        error: (e) => console.error("subscriber error", e),
        complete: () => {},
      },
    ),
  );
  await allSubscribed;
  const t0 = performance.now();
  await measure(`page reports/s during fan-out (${DB_LABEL[provider]}, HTTP, C=32, ${SUBSCRIBERS} subscribers)`, reports, 32, async (i) => {
    const l = leases[i % leases.length]!;
    const page = Math.floor(i / leases.length) + 1;
    await post(s.url, s.token, REPORT, { i: { keywordId: l.keyword.id, leaseToken: l.leaseToken, page, totalPages: 50, jobsFound: 10 } });
  });
  const burstSeconds = (performance.now() - t0) / 1000;
  await final;
  const secondsUntilAllFinal = (performance.now() - t0) / 1000;
  // The most events any subscriber got in one second (a sliding window over its arrival times).
  let maxEventsPerSecond = 0;
  for (const sub of subs) {
    for (let a = 0, b = 0; b < sub.times.length; b++) {
      while (sub.times[b]! - sub.times[a]! >= 1000) a++;
      maxEventsPerSecond = Math.max(maxEventsPerSecond, b - a + 1);
    }
  }
  for (const stop of stops) stop();
  await Promise.all(clients.map((c) => c.dispose()));
  await s.stop();
  return {
    provider,
    subscribers: SUBSCRIBERS,
    reports,
    messagesDelivered: subs.reduce((n, sub) => n + sub.times.length, 0),
    secondsUntilAllFinal,
    burstSeconds,
    maxEventsPerSecond,
    throttleMs,
  };
}

const load0 = loadavg();
console.error(
  `bench: ${[...sections].join(", ")} on ${providers.join(" and ")}${quick ? " (quick)" : ""}; load average ${load0.map((x) => x.toFixed(2)).join(" ")}`,
);
if (pgMissing) console.error(`bench: ${pgMissing}: PostgreSQL figures and pg-boss skipped`);
const LEVELS = [1, 8, 32];
const scale: Partial<Record<Provider, ScaleRow[]>> = {};
const fanouts: Fanout[] = [];
const stalls: StallRow[] = [];
let bullmqSkipped: string | null = null;

// Load from other work on the machine varies during a run: each baseline is measured right
// beside the figures compared with it.
if (sections.has("reports")) {
  for (const p of providers) {
    if (p === "sqlite") await benchRawSqlite();
    else await benchRawPostgres();
    await benchReports(p);
  }
}
if (sections.has("cycles")) {
  await benchCycles(LEVELS);
}
if (sections.has("batch")) {
  const redis = await redisAnswers(opts.redis);
  if (!redis) bullmqSkipped = `Redis not reachable at ${opts.redis}`;
  for (const p of providers) {
    if (redis) await benchBullmq(p);
    await benchBatch(p);
  }
}
if (sections.has("scale")) {
  for (const p of providers) {
    console.error(`scale: ${p}, ${SIZES.join(", ")} keywords`);
    scale[p] = await runScale(p, SIZES, SCALE_SAMPLES);
  }
}
if (sections.has("stalls")) {
  // SQLite only (PostgreSQL checkpoints in its own server). Baseline, then thread, then both again.
  for (const mode of quick ? (["commit", "thread"] as const) : (["commit", "thread", "commit", "thread"] as const)) {
    console.error(`stalls: checkpoints by ${mode}, ${STALL_SECONDS} s`);
    stalls.push(await runStalls(mode, STALL_SECONDS, quick ? 2000 : 20_000));
  }
}
if (sections.has("fanout")) fanouts.push(await benchFanout(providers[0]!));

load.close();

// Ratios, each against the figure it is measured against, with the goal beside it.
const find = (prefix: string) => rows.find((r) => r.what.startsWith(prefix))?.perSecond;
interface Ratio {
  ratio: string;
  value: number;
  goal?: string;
  met?: boolean;
}
const ratios: Ratio[] = [];
const addRatio = (ratio: string, a: number | undefined, b: number | undefined, goal?: number, lowerIsBetter = false) => {
  if (a === undefined || b === undefined) return;
  const value = a / b;
  ratios.push({
    ratio,
    value,
    ...(goal !== undefined ? { goal: `${lowerIsBetter ? "≤" : "≥"} ${goal}×`, met: lowerIsBetter ? value <= goal : value >= goal } : {}),
  });
};
for (const p of providers) {
  const L = DB_LABEL[p];
  const noop = find(`no-op mutations/s (bare Yoga, C=${C}, beside ${L})`);
  addRatio(`page reports vs bare Yoga no-op (${L})`, find(`page reports/s (${L}, HTTP`), noop, 0.5);
  addRatio(`page reports vs raw driver (${L})`, find(`page reports/s (${L}, HTTP`), find(`page reports/s (${L}, raw`));
  addRatio(`claims vs bare Yoga no-op (${L})`, find(`claims/s (${L}, HTTP`), noop);
  addRatio(`claims vs raw driver (${L})`, find(`claims/s (${L}, HTTP`), find(`claims/s (${L}, raw`));
}
for (const way of ["HTTP", "HTTP pipelined"]) {
  for (const c of LEVELS) {
    const boss = find(`pg-boss fetch→complete/s (PostgreSQL, C=${c})`);
    addRatio(`cycles (${way}) vs pg-boss, PostgreSQL, C=${c}`, find(`claim→complete cycles/s (PostgreSQL, ${way}, C=${c})`), boss, 1.0);
    addRatio(`cycles (${way}) vs pg-boss, SQLite, C=${c}`, find(`claim→complete cycles/s (SQLite, ${way}, C=${c})`), boss, 1.5);
  }
}
for (const way of ["HTTP", "HTTP pipelined"]) {
  for (const c of LEVELS) {
    const boss = find(`pg-boss fetch→complete/s over ${way} (bare Yoga in front, PostgreSQL, C=${c})`);
    addRatio(`cycles (${way}) vs pg-boss behind the same HTTP layer (${way}), PostgreSQL, C=${c}`, find(`claim→complete cycles/s (PostgreSQL, ${way}, C=${c})`), boss, 1.0);
    addRatio(`cycles (${way}) vs pg-boss behind the same HTTP layer (${way}), SQLite, C=${c}`, find(`claim→complete cycles/s (SQLite, ${way}, C=${c})`), boss, 1.5);
  }
}
for (const c of LEVELS) {
  const boss = find(`pg-boss fetch→complete/s (PostgreSQL, C=${c})`);
  addRatio(`in-process cycles vs pg-boss, PostgreSQL, C=${c}`, find(`claim→complete cycles/s (PostgreSQL, in-process store, C=${c})`), boss, 1.0);
  addRatio(`in-process cycles vs pg-boss, SQLite, C=${c}`, find(`claim→complete cycles/s (SQLite, in-process store, C=${c})`), boss, 1.5);
}
for (const p of providers) {
  const bullmq = find(`BullMQ no-op jobs/s (Redis, concurrency 8, beside ${DB_LABEL[p]})`);
  addRatio(`batched cycles (HTTP) vs BullMQ (${DB_LABEL[p]}, C=8)`, find(`batched claim→complete keywords/s (${DB_LABEL[p]}, HTTP,`), bullmq, 1.0);
  addRatio(`batched cycles (HTTP pipelined) vs BullMQ (${DB_LABEL[p]}, C=8)`, find(`batched claim→complete keywords/s (${DB_LABEL[p]}, HTTP pipelined`), bullmq, 1.0);
  addRatio(`in-process batched cycles vs BullMQ (${DB_LABEL[p]}, C=8)`, find(`batched claim→complete keywords/s (${DB_LABEL[p]}, in-process`), bullmq, 1.0);
}
for (const p of providers) {
  const r = scale[p];
  if (!r || r.length < 2) continue;
  const [first, last] = [r[0]!, r.at(-1)!];
  addRatio(`claim p50, ${last.keywords} vs ${first.keywords} keywords (${DB_LABEL[p]})`, worstP50(last.claimMorning, last.claimNight), worstP50(first.claimMorning, first.claimNight), 2, true);
  addRatio(`stats p50, ${last.keywords} vs ${first.keywords} keywords (${DB_LABEL[p]})`, worstP50(last.statsMorning, last.statsNight), worstP50(first.statsMorning, first.statsNight), 2, true);
  // Not one of the goals: the rollover must stay linear in the table (time per keyword flat).
  addRatio(`rollover per keyword, ${last.keywords} vs ${first.keywords} keywords (${DB_LABEL[p]})`, rolloverPerKeyword(last), rolloverPerKeyword(first), 2, true);
}

if (stalls.length) {
  const worst = (mode: string, key: "max" | "p999" | "loopMax") => Math.max(...stalls.filter((r) => r.checkpoints === mode).map((r) => r[key]));
  // Not one of the goals: lower is better, the commit-checkpointed run is the baseline.
  addRatio("longest event-loop stall, checkpoints on a thread vs by commit (SQLite)", worst("thread", "loopMax"), worst("commit", "loopMax"));
  addRatio("page report p99.9 latency, checkpoints on a thread vs by commit (SQLite)", worst("thread", "p999"), worst("commit", "p999"));
  addRatio("page reports/s, checkpoints on a thread vs by commit (SQLite)",
    stalls.filter((r) => r.checkpoints === "thread").reduce((a, r) => a + r.perSecond, 0),
    stalls.filter((r) => r.checkpoints === "commit").reduce((a, r) => a + r.perSecond, 0));
}

const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(2));
const load1 = loadavg();
const out: string[] = [];
out.push(`load average (1, 5, 15 min): ${load0.map((x) => x.toFixed(2)).join(" ")} at start, ${load1.map((x) => x.toFixed(2)).join(" ")} at end`);
if (rows.length) {
  out.push("", "| measurement | ops | seconds | per second |", "|---|---:|---:|---:|");
  for (const r of rows) out.push(`| ${r.what} | ${r.ops} | ${r.seconds.toFixed(2)} | ${fmt(r.perSecond)} |`);
}
if (bullmqSkipped) out.push("", `BullMQ skipped: ${bullmqSkipped}`);
if (ratios.length) {
  out.push("", "| ratio | value | goal | met |", "|---|---:|---:|:---:|");
  for (const r of ratios) out.push(`| ${r.ratio} | ${r.value.toFixed(3)}× | ${r.goal ?? ""} | ${r.met === undefined ? "" : r.met ? "yes" : "NO"} |`);
}
for (const p of providers) if (scale[p]) out.push("", scaleTable(DB_LABEL[p], scale[p]!));
if (stalls.length) out.push("", stallsTable(stalls));
for (const f of fanouts) {
  out.push(
    "",
    `fan-out (${DB_LABEL[f.provider]}, DISTRIBUTION_THROTTLE_MS=${f.throttleMs}): ${f.subscribers} subscribers, ${f.reports} page reports`,
    "",
    "| messages delivered | burst (s) | until every subscriber has the final counts (s) | most events per subscriber in 1 s | goal |",
    "|---:|---:|---:|---:|---:|",
    `| ${f.messagesDelivered} | ${f.burstSeconds.toFixed(2)} | ${f.secondsUntilAllFinal.toFixed(2)} | ${f.maxEventsPerSecond} | ≤ 10 ${f.maxEventsPerSecond <= 10 ? "(met)" : "(NOT met)"} |`,
  );
}
console.log(`\n${out.join("\n")}`);

const results = {
  at: new Date().toISOString(),
  node: process.version,
  providers,
  sections: [...sections],
  loadAverage: { start: load0, end: load1 },
  keywords: KEYWORDS,
  pages: PAGES,
  concurrency: C,
  cycles: CYCLES,
  batchKeywords: BATCH_KEYWORDS,
  quick,
  rows,
  ratios,
  scale,
  stalls,
  fanout: fanouts,
  ...(bullmqSkipped ? { bullmqSkipped } : {}),
};
mkdirSync(join(opts.out, ".."), { recursive: true });
writeFileSync(opts.out, `${JSON.stringify(results, null, 2)}\n`);
console.error(`\nwrote ${opts.out}`);
