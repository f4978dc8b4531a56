// Stale sweep: a CRAWLING keyword that has sent no heartbeat (every page report is one) for its
// source's staleAfterSeconds becomes PARTIAL, so the next claim resumes it. Measured from the last
// heartbeat, not from crawl start: a healthy long crawl is never taken away.
import type { Logger } from "pino";
import type { CrawlStore } from "../crawl/store.ts";
import { logChanges } from "./log-changes.ts";

export async function staleSweep(store: CrawlStore, log: Logger): Promise<number> {
  return logChanges(log, "stale-sweep", await store.sweepStale(), "stale CRAWLING keywords → PARTIAL");
}
