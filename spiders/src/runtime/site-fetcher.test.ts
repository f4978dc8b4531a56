// Fetching a page from the simulator: transient faults are retried, a ban is not, and a page that
// keeps failing ends as PageFailed naming the last error.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createSimServer, type Sim } from "../../sim/server.ts";
import { boss } from "../sites/boss.ts";
import { SiteBlocked } from "../sites/site.ts";
import { PageFailed, SiteFetcher } from "./site-fetcher.ts";

let sim: Sim;
beforeEach(async () => {
  sim = createSimServer({ seed: "fetcher", holdMs: 2_000 });
  await sim.start(0);
});
afterEach(() => sim.stop());

const fetcher = (retries: number) =>
  new SiteFetcher({ adapter: boss, baseUrl: sim.url("/boss"), ratePerSec: 1000, timeoutMs: 200, retries, minMs: 5, maxMs: 20 });
const kw = { city: "北京", job: "前端" };
const never = new AbortController().signal;

describe("SiteFetcher", () => {
  it("retries 503s, timeouts and truncated pages until the page parses", async () => {
    sim.setFaults("boss", { error: 0.3, timeout: 0.2, truncate: 0.2 });
    for (let page = 1; page <= 12; page++) await fetcher(30).fetch(kw, page, never);
    const log = sim.requests();
    expect(new Set(log.map((r) => r.outcome))).toEqual(new Set(["ok", "error", "timeout", "truncate"]));
    expect(log.filter((r) => r.outcome === "ok").map((r) => r.page)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
  });

  it("a ban is thrown at once, never retried", async () => {
    sim.setFaults("boss", { ban: 1 });
    await expect(fetcher(5).fetch(kw, 1, never)).rejects.toBeInstanceOf(SiteBlocked);
    expect(sim.requests()).toHaveLength(1);
  });

  it("retries are bounded: retries + 1 tries, then PageFailed with the last error", async () => {
    sim.setFaults("boss", { error: 1 });
    await expect(fetcher(3).fetch(kw, 1, never)).rejects.toThrow(new PageFailed("page 1 failed 4 times, last: boss: HTTP 503"));
    expect(sim.requests()).toHaveLength(4);
  });

  it("an abort cancels the request in flight with the abort's reason", async () => {
    sim.setFaults("boss", { latency: 1_000 });
    const stop = new AbortController();
    const p = fetcher(3).fetch(kw, 1, stop.signal);
    setTimeout(() => stop.abort(new Error("stopping")), 50);
    await expect(p).rejects.toThrow("stopping");
  });
});
