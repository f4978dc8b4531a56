// The change bus on Redis: instances with one channel prefix hear each other (their own changes
// too), other prefixes hear nothing of it, and an unreachable Redis stops start-up with a clear error.
import { afterAll, describe, expect, it } from "vitest";
import { pino } from "pino";
import { Redis } from "ioredis";
import { type LiveBus, openBus } from "../src/live/bus.ts";
import type { CrawlChange } from "../src/crawl/store.ts";
import { servicesAvailable, testRedis } from "./databases.ts";

const log = pino({ level: "silent" });

/** Everything `bus` delivers on crawlChanged, as it arrives. */
function listen(bus: LiveBus) {
  const got: CrawlChange[] = [];
  const it = bus.bus.subscribe("crawlChanged");
  void (async () => {
    for await (const c of it) got.push(c);
  })();
  return {
    got,
    stop: () => it.return?.(),
    async until(n: number) {
      for (const end = Date.now() + 5000; got.length < n; await new Promise((r) => setTimeout(r, 10))) {
        if (Date.now() > end) throw new Error(`got ${got.length} of ${n} changes`);
      }
    },
  };
}

describe("the in-process bus", () => {
  it("is the default", async () => {
    const bus = await openBus({ channelPrefix: "x:", log });
    expect(bus.kind).toBe("memory");
    const l = listen(bus);
    await bus.ready();
    bus.bus.publish("crawlChanged", { sourceId: "boss", keywordIds: [1] });
    await l.until(1);
    await l.stop();
  });
});

describe.skipIf(!(await servicesAvailable("Redis bus", ["redis"])))("the Redis bus", () => {
  const open: LiveBus[] = [];
  afterAll(async () => {
    for (const b of open) await b.close();
  });
  const bus = async (prefix: string) => {
    const b = await openBus({ redisUrl: testRedis().REDIS_URL, channelPrefix: prefix, log });
    open.push(b);
    return b;
  };

  it("delivers a change to every instance with the same prefix, and to none with another", async () => {
    const prefix = testRedis().REDIS_CHANNEL_PREFIX;
    const [a, b, other] = [await bus(prefix), await bus(prefix), await bus(testRedis().REDIS_CHANNEL_PREFIX)];
    expect(a.kind).toBe("redis");
    const [la, lb, lo] = [listen(a), listen(b), listen(other)];
    await Promise.all([a.ready(), b.ready(), other.ready()]);
    const change: CrawlChange = { sourceId: "qcwy", keywordIds: [7, 8], transitions: [{ from: "IDLE" as never, to: "CRAWLING" as never, reason: "claim", crawlerId: "spider-1" }] };
    a.bus.publish("crawlChanged", change);
    await la.until(1);
    await lb.until(1);
    expect(la.got).toEqual([change]);
    expect(lb.got).toEqual([change]);
    // A change on the other prefix arrives there; the first one never did.
    other.bus.publish("crawlChanged", { sourceId: "boss", keywordIds: [1] });
    await lo.until(1);
    expect(lo.got).toEqual([{ sourceId: "boss", keywordIds: [1] }]);
    expect(la.got).toHaveLength(1);
    await Promise.all([la.stop(), lb.stop(), lo.stop()]);
  });

  it("after its subscriber connection drops, resubscribes and asks for a refresh", async () => {
    const prefix = testRedis().REDIS_CHANNEL_PREFIX;
    const [a, b] = [await bus(prefix), await bus(prefix)];
    let resyncs = 0;
    b.onResync(() => resyncs++);
    const lb = listen(b);
    await b.ready();
    // Cut b's subscriber connection (found by its name) the way a Redis restart or a network
    // failure would; only this test's connections carry this prefix.
    const admin = new Redis(testRedis().REDIS_URL);
    try {
      const list = (await admin.client("LIST")) as string;
      const ids = list.split("\n").filter((l) => l.includes(` name=crawl-sub:${prefix} `)).map((l) => /\bid=(\d+)/.exec(l)![1]!);
      expect(ids).toHaveLength(2);
      // b opened second: the higher id.
      await admin.client("KILL", "ID", String(Math.max(...ids.map(Number))));
    } finally {
      admin.disconnect();
    }
    for (const end = Date.now() + 5000; resyncs === 0; await new Promise((r) => setTimeout(r, 20))) {
      if (Date.now() > end) throw new Error("no resync after the subscriber connection dropped");
    }
    await b.ready();
    a.bus.publish("crawlChanged", { sourceId: "zhilian", keywordIds: [3] });
    await lb.until(1);
    expect(lb.got).toEqual([{ sourceId: "zhilian", keywordIds: [3] }]);
    await lb.stop();
  });

  it("refuses to start when Redis does not answer", async () => {
    await expect(openBus({ redisUrl: "redis://127.0.0.1:1", channelPrefix: "x:", log, connectTimeoutMs: 3000 })).rejects.toThrow(
      /REDIS_URL: cannot reach Redis at 127\.0\.0\.1:1/,
    );
  });
});
