// Today's distribution as counters: every write of a keyword moves it between the (source, day,
// status) counter rows in the same transaction. Pure bookkeeping, derived from the row before and
// after the write, so no transition can forget it.
import { CrawlStatus, type KeywordState } from "./rules.ts";

/** Counter rows per (source, day, status); a keyword always lands in the same one. */
export const COUNTER_SHARDS = 16;

export interface CounterDelta {
  crawlDate: string;
  status: CrawlStatus;
  shard: number;
  keywords: number;
  jobsFound: number;
  pagesCrawled: number;
}

type Counted = Pick<KeywordState, "status" | "crawlDate" | "jobsFound" | "pagesCrawled"> & { id: number };

/**
 * What one keyword write does to today's counters. Only today's rows move: a keyword leaving
 * another day (a fresh claim of yesterday's state, the rollover) leaves that day's counters as
 * they ended. IDLE is never counted.
 */
export function counterDeltas(before: Counted, after: Counted, today: string): CounterDelta[] {
  const out: CounterDelta[] = [];
  const shard = before.id % COUNTER_SHARDS;
  if (before.crawlDate === today && before.status !== CrawlStatus.IDLE) {
    out.push({ crawlDate: today, status: before.status, shard, keywords: -1, jobsFound: -before.jobsFound, pagesCrawled: -before.pagesCrawled });
  }
  if (after.crawlDate === today && after.status !== CrawlStatus.IDLE) {
    out.push({ crawlDate: today, status: after.status, shard, keywords: 1, jobsFound: after.jobsFound, pagesCrawled: after.pagesCrawled });
  }
  return out;
}

/**
 * Sum deltas per counter row, drop the ones that cancel out, and sort them: concurrent
 * transactions then lock counter rows in one order and cannot deadlock on them.
 */
export function mergeDeltas(deltas: CounterDelta[]): CounterDelta[] {
  const byKey = new Map<string, CounterDelta>();
  for (const d of deltas) {
    const key = `${d.crawlDate} ${d.status} ${String(d.shard).padStart(3, "0")}`;
    const m = byKey.get(key);
    if (m) {
      m.keywords += d.keywords;
      m.jobsFound += d.jobsFound;
      m.pagesCrawled += d.pagesCrawled;
    } else byKey.set(key, { ...d });
  }
  return [...byKey.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, d]) => d)
    .filter((d) => d.keywords !== 0 || d.jobsFound !== 0 || d.pagesCrawled !== 0);
}
