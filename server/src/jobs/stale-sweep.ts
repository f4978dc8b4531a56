// Stale sweep: a CRAWLING keyword that has sent no heartbeat (every page report is one) for its
// source's staleAfterSeconds becomes PARTIAL, so the next claim resumes it. Measured from the last
// heartbeat, not from crawl start: a healthy long crawl is never taken away.
import type { Logger } from "pino";
import type { CrawlStore } from "../crawl/store.ts";

export async function staleSweep(store: CrawlStore, log: Logger): Promise<number> {
  const changed = await store.sweepStale();
  let total = 0;
  for (const [sourceId, n] of changed) {
    total += n;
    log.info({ job: "stale-sweep", sourceId, keywords: n }, "stale CRAWLING keywords → PARTIAL");
  }
  log.debug({ job: "stale-sweep", keywords: total }, "stale sweep done");
  return total;
}
