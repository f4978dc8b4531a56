// Today's distribution as counters: every write of a keyword moves it between the (source, day,
// status) counter rows in the same transaction. Pure bookkeeping, derived from the row before and
// after the write, so no transition can forget it.
import { CrawlStatus, type KeywordState } from "./rules.ts";

/**
 * Counter rows per (source, day, status). Readers sum them; a writer puts all of one statement's
 * (or transaction's) deltas in ONE shard, picked at random (counterShard()), so concurrent writers
 * on PostgreSQL mostly lock different rows — a batch spread over the shards by keyword would lock
 * every shard and queue behind every other batch until it commits. A shard's own figures mean
 * nothing alone (they can be negative); their sum is the day's distribution.
 */
export const COUNTER_SHARDS = 16;

/** The shard one statement's or transaction's counter deltas go to. */
export const counterShard = () => Math.floor(Math.random() * COUNTER_SHARDS);

/** A change of one (source, day, status) counter, before it is given a shard (mergeDeltas). */
export interface KeywordDelta {
  crawlDate: string;
  status: CrawlStatus;
  keywords: number;
  jobsFound: number;
  pagesCrawled: number;
}

export interface CounterDelta extends KeywordDelta {
  shard: number;
}

type Counted = Pick<KeywordState, "status" | "crawlDate" | "jobsFound" | "pagesCrawled"> & { id: number };

/**
 * What one keyword write does to today's counters. Only today's rows move: a keyword leaving
 * another day (a fresh claim of yesterday's state, the rollover) leaves that day's counters as
 * they ended. IDLE is never counted.
 */
export function counterDeltas(before: Counted, after: Counted, today: string): KeywordDelta[] {
  const out: KeywordDelta[] = [];
  if (before.crawlDate === today && before.status !== CrawlStatus.IDLE) {
    out.push({ crawlDate: today, status: before.status, keywords: -1, jobsFound: -before.jobsFound, pagesCrawled: -before.pagesCrawled });
  }
  if (after.crawlDate === today && after.status !== CrawlStatus.IDLE) {
    out.push({ crawlDate: today, status: after.status, keywords: 1, jobsFound: after.jobsFound, pagesCrawled: after.pagesCrawled });
  }
  return out;
}

/**
 * Sum deltas per counter row — all in `shard` — drop the ones that cancel out, and sort them:
 * concurrent transactions then lock counter rows in one order and cannot deadlock on them.
 */
export function mergeDeltas(deltas: KeywordDelta[], shard: number): CounterDelta[] {
  const byKey = new Map<string, CounterDelta>();
  for (const d of deltas) {
    const key = `${d.crawlDate} ${d.status}`;
    const m = byKey.get(key);
    if (m) {
      m.keywords += d.keywords;
      m.jobsFound += d.jobsFound;
      m.pagesCrawled += d.pagesCrawled;
    } else byKey.set(key, { ...d, shard });
  }
  return [...byKey.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, d]) => d)
    .filter((d) => d.keywords !== 0 || d.jobsFound !== 0 || d.pagesCrawled !== 0);
}
