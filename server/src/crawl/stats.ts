// Per-source crawl statistics for one crawl day. Today's come from the keyword rows (one grouped,
// index-covered query); a past day's from what that day left behind (page reports, and each
// keyword's last event of the day), because keyword rows only hold their latest day.
import type { Database } from "../db/client.ts";
import type { Source } from "../../../generated/sqlite/client.ts";
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
  const source = await db.reader.source.findUnique({ where: { id: sourceId } });
  if (!source) throw notFound(`source "${sourceId}" does not exist`);
  const today = calendar.today();
  const day = date ?? today;
  const counts: StatusCounts = { idle: 0, crawling: 0, completed: 0, failed: 0, partial: 0 };

  if (day === today) {
    const groups = await db.reader.keyword.groupBy({
      by: ["status"],
      where: { sourceId, crawlDate: day },
      _count: { _all: true },
      _sum: { jobsFound: true, pagesCrawled: true },
    });
    let jobs = 0;
    let pages = 0;
    for (const g of groups) {
      counts[KEY[g.status]] += g._count._all;
      jobs += g._sum.jobsFound ?? 0;
      pages += g._sum.pagesCrawled ?? 0;
    }
    return finish(source, day, counts, jobs, pages);
  }

  // A past (or future) day: last transition per keyword that day, and its page reports.
  const last = await db.reader.$queryRaw<{ to: CrawlStatus; n: bigint | number }[]>`
    SELECT e."to" AS "to", COUNT(*) AS n FROM "CrawlEvent" e
      JOIN (SELECT MAX(id) AS id FROM "CrawlEvent" WHERE "sourceId" = ${sourceId} AND "crawlDate" = ${day}
            GROUP BY "keywordId") l ON e.id = l.id
     GROUP BY e."to"`;
  for (const r of last) counts[KEY[r.to]] += Number(r.n);
  const pages = await db.reader.pageReport.aggregate({
    where: { sourceId, crawlDate: day },
    _count: { _all: true },
    _sum: { jobsFound: true },
  });
  return finish(source, day, counts, pages._sum.jobsFound ?? 0, pages._count._all);
}
