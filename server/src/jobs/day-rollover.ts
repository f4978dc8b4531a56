// Day rollover at 00:00 CRAWL_TZ. Reads already treat another day's state as IDLE; this writes it
// down (with a CrawlEvent per keyword) and tells every subscriber that the day turned.
import type { Logger } from "pino";
import type { CrawlStore } from "../crawl/store.ts";

export async function dayRollover(store: CrawlStore, log: Logger): Promise<number> {
  const changed = await store.rollover();
  let total = 0;
  for (const [sourceId, n] of changed) {
    total += n;
    log.info({ job: "day-rollover", sourceId, keywords: n }, "previous crawl day's keywords → IDLE");
  }
  log.info({ job: "day-rollover", keywords: total }, "crawl day rolled over");
  return total;
}
