// What the dashboard reads besides the distribution: today's transitions (from the CrawlEvent
// log), pages and jobs per minute (from page reports), completion over a day, and the crawlers
// seen today. Read-only; each statement is bounded by an index on (source, crawl day, …).
import type { Database, Provider } from "../db/client.ts";
import { type Keyword, Prisma } from "../../../generated/sqlite/client.ts";
import { crawlDay } from "./crawl-day.ts";
import type { CrawlStatus } from "./rules.ts";

const MINUTE = 60_000;
/** Pages per minute of a crawler are averaged over this window. */
export const RATE_WINDOW_MINUTES = 5;

export interface TransitionCount {
  from: CrawlStatus;
  to: CrawlStatus;
  count: number;
}

export interface ActivityPoint {
  at: Date;
  pages: number;
  jobsFound: number;
}

export interface CompletionPoint {
  at: Date;
  /** Keywords COMPLETED that day, cumulative at `at`. */
  completed: number;
}

export interface Crawler {
  id: string;
  sources: string[];
  /** CRAWLING keywords it holds now. */
  holding: Keyword[];
  /** Its last sign of life: a transition, a page report or a heartbeat. */
  lastHeartbeatAt: Date;
  pagesToday: number;
  pagesPerMinute: number;
}

/** PostgreSQL returns counts as bigint strings and SQLite aggregates of dates as text. */
const num = (v: unknown) => Number(v ?? 0);
const date = (v: unknown) => (v instanceof Date ? v : new Date(String(v)));

/** Minutes since the epoch of a DateTime column, as an integer, in either database. */
function epochMinute(provider: Provider, column: string): Prisma.Sql {
  return provider === "postgres"
    ? Prisma.raw(`FLOOR(EXTRACT(EPOCH FROM "${column}") / 60)::bigint`)
    : // Prisma's SQLite DateTime text: "2026-11-29T02:00:00.000+00:00", always UTC.
      Prisma.raw(`CAST(strftime('%s', substr("${column}", 1, 19)) AS INTEGER) / 60`);
}

export async function transitionCounts(db: Database, sourceId: string, day: string): Promise<TransitionCount[]> {
  const rows = await db.query<{ from: CrawlStatus; to: CrawlStatus; n: unknown }>(Prisma.sql`
    SELECT "from", "to", COUNT(*) AS n FROM "CrawlEvent"
     WHERE "sourceId" = ${sourceId} AND "crawlDate" = ${day}
     GROUP BY "from", "to"`);
  return rows.map((r) => ({ from: r.from, to: r.to, count: num(r.n) }));
}

/** Pages reported and jobs found per minute over the last `minutes`, oldest first, one point per minute. */
export async function pageActivity(db: Database, sourceId: string, now: Date, minutes: number, timeZone: string): Promise<ActivityPoint[]> {
  const last = Math.floor(now.getTime() / MINUTE);
  const first = last - minutes + 1;
  const since = new Date(first * MINUTE);
  const days = [...new Set([crawlDay(since, timeZone), crawlDay(now, timeZone)])];
  const rows = await db.query<{ minute: unknown; pages: unknown; jobs: unknown }>(Prisma.sql`
    SELECT ${epochMinute(db.provider, "reportedAt")} AS minute, COUNT(*) AS pages, SUM("jobsFound") AS jobs
      FROM "PageReport"
     WHERE "sourceId" = ${sourceId} AND "crawlDate" IN (${Prisma.join(days)}) AND "reportedAt" >= ${since}
     GROUP BY 1`);
  const byMinute = new Map(rows.map((r) => [num(r.minute), r]));
  return Array.from({ length: minutes }, (_, i) => {
    const r = byMinute.get(first + i);
    return { at: new Date((first + i) * MINUTE), pages: num(r?.pages), jobsFound: num(r?.jobs) };
  });
}

/** Keywords completed over a crawl day, cumulative, one point per minute in which the count moved. */
export async function completionSeries(db: Database, sourceId: string, day: string): Promise<CompletionPoint[]> {
  // A reset of a COMPLETED keyword takes it back out; the rollover's events belong to the day it
  // starts, not to the day whose state it clears.
  const rows = await db.query<{ minute: unknown; delta: unknown }>(Prisma.sql`
    SELECT ${epochMinute(db.provider, "at")} AS minute,
           SUM(CASE WHEN "to" = 'COMPLETED' THEN 1 ELSE 0 END) - SUM(CASE WHEN "from" = 'COMPLETED' THEN 1 ELSE 0 END) AS delta
      FROM "CrawlEvent"
     WHERE "sourceId" = ${sourceId} AND "crawlDate" = ${day} AND ("to" = 'COMPLETED' OR "from" = 'COMPLETED')
       AND "reason" <> 'rollover'
     GROUP BY 1 ORDER BY 1`);
  let completed = 0;
  return rows.map((r) => ({ at: new Date(num(r.minute) * MINUTE), completed: (completed += num(r.delta)) }));
}

/** Crawlers that made a transition or reported a page on `day`, most recently active first. */
export async function crawlersSeen(db: Database, sourceIds: string[], day: string, now: Date): Promise<Crawler[]> {
  const recent = new Date(now.getTime() - RATE_WINDOW_MINUTES * MINUTE);
  const crawlers = new Map<string, Crawler>();
  const get = (id: string, sourceId: string) => {
    let c = crawlers.get(id);
    if (!c) crawlers.set(id, (c = { id, sources: [], holding: [], lastHeartbeatAt: new Date(0), pagesToday: 0, pagesPerMinute: 0 }));
    if (!c.sources.includes(sourceId)) c.sources.push(sourceId);
    return c;
  };
  const seen = (c: Crawler, at: Date | null) => {
    if (at && at > c.lastHeartbeatAt) c.lastHeartbeatAt = at;
  };
  // Per source, so each statement uses the (sourceId, crawlDate, …) indexes.
  for (const sourceId of sourceIds) {
    const events = await db.query<{ crawlerId: string; last: unknown }>(Prisma.sql`
      SELECT "crawlerId", MAX("at") AS last FROM "CrawlEvent"
       WHERE "sourceId" = ${sourceId} AND "crawlDate" = ${day} AND "crawlerId" <> ''
       GROUP BY "crawlerId"`);
    for (const e of events) seen(get(e.crawlerId, sourceId), date(e.last));
    const pages = await db.query<{ crawlerId: string; pages: unknown; recent: unknown; last: unknown }>(Prisma.sql`
      SELECT "crawlerId", COUNT(*) AS pages, SUM(CASE WHEN "reportedAt" >= ${recent} THEN 1 ELSE 0 END) AS recent,
             MAX("reportedAt") AS last
        FROM "PageReport" WHERE "sourceId" = ${sourceId} AND "crawlDate" = ${day}
       GROUP BY "crawlerId"`);
    for (const p of pages) {
      const c = get(p.crawlerId, sourceId);
      c.pagesToday += num(p.pages);
      c.pagesPerMinute += num(p.recent) / RATE_WINDOW_MINUTES;
      seen(c, date(p.last));
    }
    const held = await db.query<Keyword>(Prisma.sql`
      SELECT * FROM "Keyword" WHERE "status" = 'CRAWLING' AND "crawlDate" = ${day} AND "sourceId" = ${sourceId}
       ORDER BY "id"`);
    for (const kw of held) {
      const c = get(kw.crawlerId, sourceId);
      c.holding.push(kw);
      seen(c, kw.heartbeatAt ? date(kw.heartbeatAt) : null);
    }
  }
  return [...crawlers.values()].sort((a, b) => b.lastHeartbeatAt.getTime() - a.lastHeartbeatAt.getTime() || a.id.localeCompare(b.id));
}
