// What every resolver gets: the shared services and who is asking.
import type { Logger } from "pino";
import type { Principal } from "./auth/tokens.ts";
import type { CollectorService } from "./collector/service.ts";
import type { Config } from "./config.ts";
import type { ActivityReader } from "./crawl/activity.ts";
import type { CrawlCalendar } from "./crawl/crawl-day.ts";
import type { CrawlStore } from "./crawl/store.ts";
import type { Database, Db } from "./db/client.ts";
import type { Bus } from "./live/bus.ts";
import type { DistributionFeed } from "./live/distribution-feed.ts";

export interface Services {
  config: Config;
  database: Database;
  calendar: CrawlCalendar;
  store: CrawlStore;
  bus: Bus;
  distribution: DistributionFeed;
  /** The dashboard's reads: transitions, activity, completion, fleet. */
  activity: ActivityReader;
  collector: CollectorService;
  log: Logger;
}

export interface Context extends Services {
  /** Reader client; plugin-prisma loads relations through it. */
  db: Db;
  /** null: no token was presented. */
  principal: Principal | null;
}
