// Per-source crawl statistics for one crawl day, read from the day's counters (maintained with
// every keyword write, see counters.ts): constant time at any number of keywords. A past day's
// counters are its distribution as the day ended.
import type { Database } from "../db/client.ts";
import { type CrawlCounter, Prisma, type Source } from "../../../generated/sqlite/client.ts";
import { notFound } from "../errors.ts";
import type { CrawlCalendar } from "./crawl-day.ts";
import { CrawlStatus } from "./rules.ts";

export interface StatusCounts {
  idle: number;
  crawling: number;
  completed: number;
  failed: number;
  partial: number;
}

export interface CrawlStats {
  source: Source;
  date: string;
  total: number;
  used: number;
  unused: number;
  byStatus: StatusCounts;
  jobsFound: number;
  pagesCrawled: number;
}

const KEY: Record<CrawlStatus, keyof StatusCounts> = {
  IDLE: "idle",
  CRAWLING: "crawling",
  COMPLETED: "completed",
  FAILED: "failed",
  PARTIAL: "partial",
};

function finish(source: Source, date: string, counts: StatusCounts, jobsFound: number, pagesCrawled: number): CrawlStats {
  const total = source.keywordCount;
  const used = counts.crawling + counts.completed + counts.failed + counts.partial;
  return {
    source,
    date,
    total,
    used,
    unused: total - used,
    byStatus: { ...counts, idle: total - used },
    jobsFound,
    pagesCrawled,
  };
}

export async function crawlStats(db: Database, calendar: CrawlCalendar, sourceId: string, date?: string | null): Promise<CrawlStats> {
  const [source] = await db.query<Source>(Prisma.sql`SELECT * FROM "Source" WHERE "id" = ${sourceId}`);
  if (!source) throw notFound(`source "${sourceId}" does not exist`);
  const day = date ?? calendar.today();
  const counts: StatusCounts = { idle: 0, crawling: 0, completed: 0, failed: 0, partial: 0 };
  let jobs = 0;
  let pages = 0;
  // At most four statuses × 16 shards, whatever the number of keywords (see counters.ts).
  const counters = await db.query<CrawlCounter>(
    Prisma.sql`SELECT * FROM "CrawlCounter" WHERE "sourceId" = ${sourceId} AND "crawlDate" = ${day}`,
  );
  for (const c of counters) {
    counts[KEY[c.status]] += c.keywords;
    jobs += c.jobsFound;
    pages += c.pagesCrawled;
  }
  return finish(source, day, counts, jobs, pages);
}
