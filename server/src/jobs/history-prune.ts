// History prune: the per-day history — the CrawlEvent log, PageReports and the PostingSightings of
// those pages — grows with every crawl day (at 1M keywords about 4M events and 5M page reports a
// day) and is only read for recent days. Rows of crawl days older than HISTORY_RETENTION_DAYS go,
// in small transactions so that crawling goes on meanwhile (on SQLite each batch is one turn of the
// single writer). Keywords, their state, job postings and the daily counters (a few hundred rows a
// day: the distribution of every past day) are kept.
import type { Logger } from "pino";
import { Prisma } from "../../../generated/sqlite/client.ts";
import { addDays, type CrawlCalendar } from "../crawl/crawl-day.ts";
import type { Database } from "../db/client.ts";

/** Page reports deleted per transaction; events a twentieth of it, each taking its keyword day's sightings along (~30 a page). */
export const PRUNE_BATCH = 5000;

export type PrunedTable = "CrawlEvent" | "PageReport" | "PostingSighting";

export interface PruneResult {
  /** Crawl days before this one were pruned. */
  before: string;
  deleted: Record<PrunedTable, number>;
}

/** The first crawl day kept: `days` days before `today` (today itself is day 0). */
export function retentionStart(today: string, days: number): string {
  return addDays(today, -days);
}

/** Delete every source's history of crawl days before `before`, `batch` page reports (a twentieth as many events) per transaction. */
export async function pruneHistory(database: Database, before: string, batch = PRUNE_BATCH): Promise<PruneResult> {
  const deleted: Record<PrunedTable, number> = { CrawlEvent: 0, PageReport: 0, PostingSighting: 0 };
  const sources = await database.query<{ id: string }>(Prisma.sql`SELECT "id" FROM "Source" ORDER BY "id"`);
  const eventBatch = Math.max(1, Math.floor(batch / 20));
  for (const { id } of sources) {
    for (;;) {
      // Events, each taking the postings' sightings of its keyword's crawl day along (the whole day
      // is past the window): a keyword has sightings of a day only under a lease of that day, so
      // that day's claim is in the log. This takes all of them — those of pages never reported too
      // (a crawler that died between submitting and reporting a page, or before its first report).
      const [events, sightings] = await database.transaction(async (tx) => {
        const gone = await tx.query<{ keywordId: number; crawlDate: string }>(Prisma.sql`
          DELETE FROM "CrawlEvent" WHERE "id" IN (
            SELECT "id" FROM "CrawlEvent" WHERE "sourceId" = ${id} AND "crawlDate" < ${before} LIMIT ${eventBatch})
          RETURNING "keywordId", "crawlDate"`);
        if (!gone.length) return [0, 0];
        const days = [...new Map(gone.map((g) => [`${g.keywordId}\u0000${g.crawlDate}`, g])).values()];
        const keys = database.provider === "postgres"
          ? Prisma.sql`SELECT * FROM unnest(${days.map((g) => g.keywordId)}::int[], ${days.map((g) => g.crawlDate)}::text[])`
          : Prisma.sql`SELECT j.value ->> 0, j.value ->> 1 FROM json_each(${JSON.stringify(days.map((g) => [g.keywordId, g.crawlDate]))}) j`;
        return [gone.length, await tx.execute(Prisma.sql`DELETE FROM "PostingSighting" WHERE ("keywordId", "crawlDate") IN (${keys})`)];
      });
      deleted.CrawlEvent += events;
      deleted.PostingSighting += sightings;
      if (events < eventBatch) break;
    }
    for (;;) {
      const n = await database.transaction((tx) =>
        tx.execute(Prisma.sql`
          DELETE FROM "PageReport" WHERE ("keywordId", "crawlDate", "page") IN (
            SELECT "keywordId", "crawlDate", "page" FROM "PageReport" WHERE "sourceId" = ${id} AND "crawlDate" < ${before} LIMIT ${batch})`),
      );
      deleted.PageReport += n;
      if (n < batch) break;
    }
  }
  return { before, deleted };
}

/** The scheduled job: prune what is older than `retentionDays` (0: keep everything), with the rows deleted in all. */
export async function historyPrune(
  database: Database,
  calendar: CrawlCalendar,
  retentionDays: number,
  log: Logger,
): Promise<(PruneResult & { total: number }) | null> {
  if (retentionDays <= 0) {
    log.debug({ job: "history-prune" }, "HISTORY_RETENTION_DAYS is 0: history kept");
    return null;
  }
  const result = await pruneHistory(database, retentionStart(calendar.today(), retentionDays));
  const total = Object.values(result.deleted).reduce((a, b) => a + b, 0);
  log[total ? "info" : "debug"]({ job: "history-prune", before: result.before, ...result.deleted }, "history-prune done");
  return { ...result, total };
}
