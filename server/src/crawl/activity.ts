// What the dashboard reads besides the distribution: today's transitions (from the CrawlEvent
// log), pages and jobs per minute, completion over the day, and the crawlers seen today.
//
// Every open dashboard asks for these every few seconds, and a crawl day holds millions of page
// reports and events; on SQLite a read runs on the server's thread. So nothing here re-reads a
// day: finished minutes of page activity are kept; the fleet and the completion curve are read
// from the log once per (source, day), then follow the change bus and the day's counters; the
// per-request reads are index ranges over the last few minutes.
import type { Database, Provider } from "../db/client.ts";
import { type Keyword, Prisma } from "../../../generated/sqlite/client.ts";
import { type CrawlCalendar, crawlDay } from "./crawl-day.ts";
import type { CrawlStatus } from "./rules.ts";
import { crawlStats } from "./stats.ts";
import type { CrawlChange } from "./store.ts";
import { ReadCoalescer } from "../live/read-coalescer.ts";

const MINUTE = 60_000;
/** Pages per minute of a crawler are averaged over this window. */
export const RATE_WINDOW_MINUTES = 5;
/** Longest page-activity window: one day of minutes. */
export const MAX_ACTIVITY_MINUTES = 24 * 60;
/**
 * A minute this far behind the current one is final: its page reports have committed (writes are
 * short transactions). Only a page re-reported later moves out of it, which the cache ignores.
 */
const SETTLE_MINUTES = 2;
/** Least time between two reads of the same source's transitions or fleet, whatever the number of dashboards. */
const READ_INTERVAL_MS = 1_000;
/** The fleet's rates move with time alone: read an unchanged source again after this long. */
const FLEET_MAX_AGE_MS = 10_000;

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
  pagesPerMinute: number;
}

/** PostgreSQL returns counts as bigint strings and SQLite aggregates of dates as text. */
const num = (v: unknown) => Number(v ?? 0);
const date = (v: unknown) => (v instanceof Date ? v : new Date(String(v)));
const minuteOf = (d: Date) => Math.floor(d.getTime() / MINUTE);

/** Minutes since the epoch of a DateTime column, as an integer, in either database. */
function epochMinute(provider: Provider, column: string): Prisma.Sql {
  return provider === "postgres"
    ? Prisma.raw(`FLOOR(EXTRACT(EPOCH FROM "${column}") / 60)::bigint`)
    : // Prisma's SQLite DateTime text: "2026-11-29T02:00:00.000+00:00", always UTC.
      Prisma.raw(`CAST(strftime('%s', substr("${column}", 1, 19)) AS INTEGER) / 60`);
}

interface MinuteCache {
  /** Final minutes read so far: [from, through], both inclusive; empty when through < from. */
  from: number;
  through: number;
  points: Map<number, { pages: number; jobs: number }>;
}

/** One source's part of the fleet. */
interface SourceFleet {
  seen: [crawlerId: string, at: Date][];
  pages: { crawlerId: string; pages: number; last: Date }[];
  held: Keyword[];
}

/** Per (source, crawl day): who was seen when (kept by the bus once read), and the completion curve. */
interface DayTally {
  crawlers: Map<string, Date>;
  completion: CompletionPoint[];
  ready: Promise<void>;
}

export class ActivityReader {
  private minutes = new Map<string, MinuteCache>();
  private tallies = new Map<string, DayTally>();
  private transitionReads = new ReadCoalescer<TransitionCount[]>(READ_INTERVAL_MS);
  private fleetReads = new ReadCoalescer<SourceFleet>(READ_INTERVAL_MS, FLEET_MAX_AGE_MS);

  constructor(
    private readonly db: Database,
    private readonly calendar: CrawlCalendar,
    private readonly timeZone: string,
  ) {}

  /** Feed of committed changes (from the bus, so every instance sees every change). */
  observe(change: CrawlChange) {
    const key = `${change.sourceId}|${this.calendar.today()}`;
    this.transitionReads.changed(key);
    this.fleetReads.changed(key);
    const tally = this.tallies.get(key);
    if (!tally) return; // not read yet: the first read takes it from the log
    const now = this.calendar.now();
    for (const t of change.transitions ?? []) if (t.crawlerId) tally.crawlers.set(t.crawlerId, now);
  }

  transitionCounts(sourceId: string, day: string): Promise<TransitionCount[]> {
    if (day !== this.calendar.today()) return this.readTransitions(sourceId, day);
    this.transitionReads.forget((k) => k.endsWith(`|${day}`));
    return this.transitionReads.get(`${sourceId}|${day}`, () => this.readTransitions(sourceId, day));
  }

  private readTransitions(sourceId: string, day: string): Promise<TransitionCount[]> {
    // Index-only: (sourceId, crawlDate, from, to).
    return this.db
      .query<{ from: CrawlStatus; to: CrawlStatus; n: unknown }>(Prisma.sql`
        SELECT "from", "to", COUNT(*) AS n FROM "CrawlEvent"
         WHERE "sourceId" = ${sourceId} AND "crawlDate" = ${day}
         GROUP BY "from", "to"`)
      .then((rows) => rows.map((r) => ({ from: r.from, to: r.to, count: num(r.n) })));
  }

  /** Pages reported and jobs found per minute over the last `minutes`, oldest first, one point per minute. */
  async pageActivity(sourceId: string, minutes: number): Promise<ActivityPoint[]> {
    const now = this.calendar.now();
    const last = minuteOf(now);
    const first = last - minutes + 1;
    const settled = last - SETTLE_MINUTES;
    let cache = this.minutes.get(sourceId);
    // Start over when the cache cannot be extended to a contiguous range.
    if (!cache || cache.through < cache.from || first > cache.through || settled < cache.from) {
      cache = { from: first, through: first - 1, points: new Map() };
      this.minutes.set(sourceId, cache);
    }
    if (first < cache.from) {
      await this.readMinutes(sourceId, first, cache.from - 1, cache.points);
      cache.from = first;
    }
    const fresh = new Map<number, { pages: number; jobs: number }>();
    await this.readMinutes(sourceId, cache.through + 1, last, fresh);
    for (const [m, p] of fresh) if (m <= settled) cache.points.set(m, p);
    cache.through = Math.max(cache.through, settled);
    // Forget what no window can ask for any more.
    for (const m of cache.points.keys()) if (m <= last - MAX_ACTIVITY_MINUTES) cache.points.delete(m);
    cache.from = Math.max(cache.from, last - MAX_ACTIVITY_MINUTES + 1);

    return Array.from({ length: minutes }, (_, i) => {
      const m = first + i;
      const p = fresh.get(m) ?? cache.points.get(m);
      return { at: new Date(m * MINUTE), pages: p?.pages ?? 0, jobsFound: p?.jobs ?? 0 };
    });
  }

  /** Page reports per minute in [from, to] (minute numbers), one index range. */
  private async readMinutes(sourceId: string, from: number, to: number, into: Map<number, { pages: number; jobs: number }>) {
    if (to < from) return;
    const since = new Date(from * MINUTE);
    const until = new Date((to + 1) * MINUTE);
    const days = [...new Set([crawlDay(since, this.timeZone), crawlDay(until, this.timeZone)])];
    const rows = await this.db.query<{ minute: unknown; pages: unknown; jobs: unknown }>(Prisma.sql`
      SELECT ${epochMinute(this.db.provider, "reportedAt")} AS minute, COUNT(*) AS pages, SUM("jobsFound") AS jobs
        FROM "PageReport"
       WHERE "sourceId" = ${sourceId} AND "crawlDate" IN (${Prisma.join(days)})
         AND "reportedAt" >= ${since} AND "reportedAt" < ${until}
       GROUP BY 1`);
    for (const r of rows) into.set(num(r.minute), { pages: num(r.pages), jobs: num(r.jobs) });
  }

  /** Keywords completed over a crawl day, cumulative, one point per minute in which the count moved. */
  async completionSeries(sourceId: string, day: string): Promise<CompletionPoint[]> {
    if (day !== this.calendar.today()) return this.readCompletion(sourceId, day);
    const { completion } = await this.tally(sourceId);
    // The day's counter is exact and cheap: each read adds the count as it is now, so the curve
    // follows the day without reading the log again.
    const now = (await crawlStats(this.db, this.calendar, sourceId, day)).byStatus.completed;
    const last = completion.at(-1);
    if ((last?.completed ?? 0) !== now) {
      const at = new Date(minuteOf(this.calendar.now()) * MINUTE);
      if (last && last.at.getTime() === at.getTime()) last.completed = now;
      else completion.push({ at, completed: now });
    }
    return completion.map((p) => ({ ...p }));
  }

  private async readCompletion(sourceId: string, day: string): Promise<CompletionPoint[]> {
    // A reset of a COMPLETED keyword takes it back out; the rollover's events belong to the day it
    // starts, not to the day whose state it clears.
    const rows = await this.db.query<{ minute: unknown; delta: unknown }>(Prisma.sql`
      SELECT ${epochMinute(this.db.provider, "at")} AS minute,
             SUM(CASE WHEN "to" = 'COMPLETED' THEN 1 ELSE 0 END) - SUM(CASE WHEN "from" = 'COMPLETED' THEN 1 ELSE 0 END) AS delta
        FROM "CrawlEvent"
       WHERE "sourceId" = ${sourceId} AND "crawlDate" = ${day} AND ("to" = 'COMPLETED' OR "from" = 'COMPLETED')
         AND "reason" <> 'rollover'
       GROUP BY 1 ORDER BY 1`);
    let completed = 0;
    return rows.map((r) => ({ at: new Date(num(r.minute) * MINUTE), completed: (completed += num(r.delta)) }));
  }

  /** Today's tally of a source: read from the log once, then kept by observe(). */
  private async tally(sourceId: string): Promise<DayTally> {
    const day = this.calendar.today();
    const key = `${sourceId}|${day}`;
    let tally = this.tallies.get(key);
    if (!tally) {
      for (const k of this.tallies.keys()) if (!k.endsWith(`|${day}`)) this.tallies.delete(k);
      const t: DayTally = { crawlers: new Map(), completion: [], ready: Promise.resolve() };
      // Registered before reading, so crawlers seen meanwhile are kept: last-seen times merge by
      // maximum, whichever arrives first.
      t.ready = (async () => {
        const seen = await this.db.query<{ crawlerId: string; last: unknown }>(Prisma.sql`
          SELECT "crawlerId", MAX("at") AS last FROM "CrawlEvent"
           WHERE "sourceId" = ${sourceId} AND "crawlDate" = ${day} AND "crawlerId" <> ''
           GROUP BY "crawlerId"`);
        for (const s of seen) {
          const at = date(s.last);
          const known = t.crawlers.get(s.crawlerId);
          if (!known || known < at) t.crawlers.set(s.crawlerId, at);
        }
        t.completion = await this.readCompletion(sourceId, day);
      })();
      this.tallies.set(key, t);
      tally = t;
    }
    try {
      await tally.ready;
    } catch (e) {
      this.tallies.delete(key); // read again next time
      throw e;
    }
    return tally;
  }

  /** Crawlers seen today (a transition, a page report, a held keyword), most recently active first. */
  async crawlers(sourceIds: string[]): Promise<Crawler[]> {
    const day = this.calendar.today();
    this.fleetReads.forget((k) => k.endsWith(`|${day}`));
    const crawlers = new Map<string, Crawler>();
    const get = (id: string, sourceId: string) => {
      let c = crawlers.get(id);
      if (!c) crawlers.set(id, (c = { id, sources: [], holding: [], lastHeartbeatAt: new Date(0), pagesPerMinute: 0 }));
      if (!c.sources.includes(sourceId)) c.sources.push(sourceId);
      return c;
    };
    const seen = (c: Crawler, at: Date | null) => {
      if (at && at > c.lastHeartbeatAt) c.lastHeartbeatAt = at;
    };
    for (const sourceId of sourceIds) {
      const part = await this.fleetReads.get(`${sourceId}|${day}`, () => this.readFleet(sourceId, day));
      for (const [id, at] of part.seen) seen(get(id, sourceId), at);
      for (const p of part.pages) {
        const c = get(p.crawlerId, sourceId);
        c.pagesPerMinute += p.pages / RATE_WINDOW_MINUTES;
        seen(c, p.last);
      }
      for (const kw of part.held) {
        const c = get(kw.crawlerId, sourceId);
        c.holding.push(kw);
        seen(c, kw.heartbeatAt ? date(kw.heartbeatAt) : null);
      }
    }
    return [...crawlers.values()].sort((a, b) => b.lastHeartbeatAt.getTime() - a.lastHeartbeatAt.getTime() || a.id.localeCompare(b.id));
  }

  private async readFleet(sourceId: string, day: string): Promise<SourceFleet> {
    const seen = [...(await this.tally(sourceId)).crawlers];
    const recent = new Date(this.calendar.now().getTime() - RATE_WINDOW_MINUTES * MINUTE);
    // The last few minutes of page reports: an index range on (sourceId, crawlDate, reportedAt).
    const pages = await this.db.query<{ crawlerId: string; pages: unknown; last: unknown }>(Prisma.sql`
      SELECT "crawlerId", COUNT(*) AS pages, MAX("reportedAt") AS last FROM "PageReport"
       WHERE "sourceId" = ${sourceId} AND "crawlDate" = ${day} AND "reportedAt" >= ${recent}
       GROUP BY "crawlerId"`);
    const held = await this.db.query<Keyword>(Prisma.sql`
      SELECT * FROM "Keyword" WHERE "status" = 'CRAWLING' AND "crawlDate" = ${day} AND "sourceId" = ${sourceId}
       ORDER BY "id"`);
    return { seen, pages: pages.map((p) => ({ crawlerId: p.crawlerId, pages: num(p.pages), last: date(p.last) })), held };
  }
}
