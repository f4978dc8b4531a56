// The change bus: the crawl store publishes what changed here, and every server instance's live
// feeds listen. In-process by default; a shared event target (Redis) makes it span instances.
import { createPubSub, type PubSub } from "graphql-yoga";
import type { CrawlChange } from "../crawl/store.ts";

export type BusTopics = {
  crawlChanged: [CrawlChange];
  /** A collector task's configuration or progress changed. */
  collectorChanged: [taskId: number, change: { taskId: number }];
};
export type Bus = PubSub<BusTopics>;

export function createBus(options?: Parameters<typeof createPubSub<BusTopics>>[0]): Bus {
  return createPubSub<BusTopics>(options);
}
