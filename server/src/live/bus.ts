// The change bus: the crawl store publishes what changed here, and every server instance's live
// feeds listen. In-process by default; with REDIS_URL it is Redis pub/sub
// (@graphql-yoga/redis-event-target), so a subscriber on one instance sees changes made through
// another. Every instance then hears every change, its own included, through Redis.
import { setMaxListeners } from "node:events";
import { createPubSub, type PubSub } from "graphql-yoga";
import { createRedisEventTarget } from "@graphql-yoga/redis-event-target";
import { Redis } from "ioredis";
import type { Logger } from "pino";
import type { CrawlChange } from "../crawl/store.ts";

export type BusTopics = {
  crawlChanged: [CrawlChange];
  /** A collector task's configuration or progress changed. */
  collectorChanged: [taskId: number, change: { taskId: number }];
};
export type Bus = PubSub<BusTopics>;

export interface LiveBus {
  bus: Bus;
  kind: "memory" | "redis";
  /**
   * Resolves once every subscription made so far is in force (on Redis: the subscriber connection
   * has answered a PING sent after its SUBSCRIBE commands).
   */
  ready(): Promise<void>;
  /** `fn` runs when changes may have been missed (the Redis subscriber reconnected). */
  onResync(fn: () => void): void;
  close(): Promise<void>;
}

export interface BusOptions {
  redisUrl?: string;
  /** Put before every Redis channel name, so several deployments (or tests) share one Redis. */
  channelPrefix: string;
  log: Logger;
  /** How long start-up waits for Redis before giving up. @default 10000 */
  connectTimeoutMs?: number;
}

export async function openBus(options: BusOptions): Promise<LiveBus> {
  if (!options.redisUrl) {
    // Every live subscription listens on this target: many subscribers are normal, not a leak, so
    // no MaxListenersExceededWarning at the 11th.
    const target = new EventTarget();
    setMaxListeners(0, target);
    const bus = createPubSub<BusTopics>({ eventTarget: target as never });
    return { bus, kind: "memory", ready: async () => {}, onResync: () => {}, close: async () => {} };
  }
  return openRedisBus(options.redisUrl, options);
}

/** host:port of a Redis URL, never its password, for messages. */
const where = (url: string) => {
  const u = new URL(url);
  return `${u.hostname}:${u.port || 6379}`;
};

async function openRedisBus(url: string, options: BusOptions): Promise<LiveBus> {
  const log = options.log.child({ redis: where(url) });
  // Connections named after the deployment's prefix, so `CLIENT LIST` tells whose they are. The
  // subscriber's commands wait through an outage (it resubscribes on reconnect by itself); a
  // publish fails after ioredis's retries and is logged: that change is not broadcast.
  const name = (role: string) => `crawl-${role}:${options.channelPrefix}`.replace(/[^!-~]/g, "_");
  const publisher = new Redis(url, { lazyConnect: true, connectionName: name("pub") });
  const subscriber = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: null, connectionName: name("sub") });
  let lastError = "";
  for (const [role, client] of [["publisher", publisher], ["subscriber", subscriber]] as const) {
    client.on("error", (err: Error) => {
      if (err.message !== lastError) log.warn({ role, err: err.message }, "redis connection error; reconnecting");
      lastError = err.message;
    });
    client.on("ready", () => (lastError = ""));
  }

  const timeoutMs = options.connectTimeoutMs ?? 10_000;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      Promise.all([publisher.connect(), subscriber.connect()]),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(lastError || "timed out")), timeoutMs))),
    ]);
  } catch (e) {
    publisher.disconnect();
    subscriber.disconnect();
    throw new Error(`REDIS_URL: cannot reach Redis at ${where(url)} within ${timeoutMs} ms (${(e as Error).message})`);
  } finally {
    clearTimeout(timer);
  }

  // Connected now: every later "ready" is a reconnect, after which ioredis has resubscribed.
  const resync = new Set<() => void>();
  subscriber.on("ready", () => {
    log.info("redis subscriber reconnected; refreshing live feeds");
    for (const fn of resync) fn();
  });

  // The event target fires these commands without awaiting them: log their failures here instead
  // of leaving unhandled rejections.
  const failed = (what: string) => (err: Error) => log.warn({ err: err.message }, `redis ${what} failed`);
  const publishClient = {
    publish: (channel: string, message: string) => publisher.publish(channel, message).catch(failed("publish")),
  } as unknown as Redis;
  const subscribeClient = {
    on: (event: string, fn: (...args: any[]) => void) => subscriber.on(event, fn),
    subscribe: (channel: string) => subscriber.subscribe(channel).catch(failed("subscribe")),
    unsubscribe: (channel: string) => subscriber.unsubscribe(channel).catch(failed("unsubscribe")),
  } as unknown as Redis;
  const target = createRedisEventTarget<CustomEvent>({ publishClient, subscribeClient });
  // Topic `t` is channel `<prefix>t`.
  const prefix = options.channelPrefix;
  const prefixed: typeof target = {
    addEventListener: (type, listener) => target.addEventListener(prefix + type, listener),
    removeEventListener: (type, listener) => target.removeEventListener(prefix + type, listener),
    dispatchEvent: (event) => target.dispatchEvent(new CustomEvent(prefix + event.type, { detail: event.detail })),
  };
  log.info({ channelPrefix: prefix }, "live bus on redis");

  return {
    bus: createPubSub<BusTopics>({ eventTarget: prefixed }),
    kind: "redis",
    ready: async () => {
      await subscriber.ping();
    },
    onResync: (fn) => resync.add(fn),
    async close() {
      resync.clear();
      await Promise.allSettled([publisher.quit(), subscriber.quit()]);
    },
  };
}
