// The in-process bus carries one listener per live subscription: a crowd of subscribers is normal,
// so Node must not warn about a listener leak at the 11th.
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { CrawlChange } from "../crawl/store.ts";
import { openBus } from "./bus.ts";

describe("in-process bus", () => {
  it("serves 50 subscribers without a MaxListenersExceededWarning, each hearing every change", async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on("warning", onWarning);
    const live = await openBus({ channelPrefix: "test:", log: pino({ level: "silent" }) });
    const subs = Array.from({ length: 50 }, () => live.bus.subscribe("crawlChanged")[Symbol.asyncIterator]());
    const firsts = subs.map((it) => it.next());
    await new Promise((r) => setTimeout(r, 10)); // every iterator is listening
    live.bus.publish("crawlChanged", { sourceId: "boss" } as CrawlChange);
    const got = await Promise.all(firsts);
    expect(got.every((r) => (r.value as CrawlChange).sourceId === "boss")).toBe(true);
    await new Promise((r) => setImmediate(r)); // warnings are emitted on the next tick
    process.off("warning", onWarning);
    await Promise.all(subs.map((it) => it.return?.()));
    expect(warnings.filter((w) => w.name === "MaxListenersExceededWarning")).toEqual([]);
  });
});
