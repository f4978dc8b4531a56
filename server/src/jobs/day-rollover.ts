// Day rollover at 00:00 CRAWL_TZ. Reads already treat another day's state as IDLE; this writes it
// down (with a CrawlEvent per keyword) and tells every subscriber that the day turned.
import type { Logger } from "pino";
import type { CrawlStore } from "../crawl/store.ts";
import { logChanges } from "./log-changes.ts";

export async function dayRollover(store: CrawlStore, log: Logger): Promise<number> {
  return logChanges(log, "day-rollover", await store.rollover(), "previous crawl day's keywords → IDLE");
}
