// Site faults: with 20% 5xx, 10% timeouts and some truncated JSON the crawl still completes with
// exact counts; a permanent ban ends the keyword FAILED with the ban in errorMessage, and the
// fleet stops retrying it at the source's maxRetries.
import { afterEach, describe, expect, it } from "vitest";
import { SITES } from "../sim/data.ts";
import { expectExact, type Fleet, keywordsOf, spawnSpider, startFleet } from "./fleet.ts";

describe("site faults", () => {
  let fleet: Fleet | undefined;
  afterEach(() => fleet?.close());
  const env = (f: Fleet) => ({ apiUrl: f.server.app.url(), token: f.server.tokens.spider, simUrl: f.sim.url() });

  it("20% 5xx + 10% timeouts + 5% truncated JSON: every keyword COMPLETED, counts exact", async () => {
    fleet = await startFleet("sqlite", "faults");
    const { server, sim } = fleet;
    // Fewer 51job pages keep the run short; the faults are what is tested.
    await server.ok(`mutation { updateSource(id: "qcwy", input: { maxPages: 12 }) { id } }`);
    for (const site of SITES) {
      await server.importKeywords(site, ["北京", "上海"], ["前端", "测试"]);
      sim.setFaults(site, { error: 0.2, timeout: 0.1, truncate: 0.05 });
    }
    // Timeouts cost SITE_TIMEOUT_MS each: keep it short here.
    const spiders = SITES.map((site) => spawnSpider(site, env(fleet!), ["--once", "--concurrency", "2"], { SITE_TIMEOUT_MS: "400" }));
    const exits = await Promise.all(spiders.map((s) => s.exited));
    expect(exits.map((e) => e.code)).toEqual([0, 0, 0]);
    const maxPages = { boss: 3, qcwy: 12, zhilian: 15 } as const;
    for (const site of SITES) for (const kw of await keywordsOf(server, site)) await expectExact(fleet, site, kw, maxPages[site]);
    const outcomes = new Set(sim.requests().map((r) => r.outcome));
    expect([...outcomes].sort()).toEqual(["error", "ok", "timeout", "truncate"]);
    // The retries were logged as such.
    expect(spiders.some((s) => s.lines.some((l) => l.msg === "site request failed, retrying"))).toBe(true);
  });

  it("a permanent ban: FAILED with the ban in errorMessage, claimed again until maxRetries, then left", async () => {
    fleet = await startFleet("sqlite", "ban");
    const { server, sim } = fleet;
    await server.importKeywords("boss", ["北京"], ["前端", "后端"]);
    await server.importKeywords("zhilian", ["深圳"], ["前端"]);
    sim.setFaults("boss", { ban: 1 });
    sim.setFaults("zhilian", { ban: 1 });
    const spiders = ["boss", "zhilian"].map((site) => spawnSpider(site as "boss", env(fleet!), ["--once"]));
    expect((await Promise.all(spiders.map((s) => s.exited))).map((e) => e.code)).toEqual([0, 0]);

    const maxRetries = 3;
    for (const [site, pattern] of [["boss", /code 37 您的环境存在异常/], ["zhilian", /Security Verification/]] as const) {
      for (const kw of await keywordsOf(server, site)) {
        expect(kw.status).toBe("FAILED");
        expect(kw.errorMessage).toMatch(pattern);
        expect(kw.jobsFound).toBe(0);
        expect(kw.retryCount).toBe(maxRetries);
        // The first claim and maxRetries retries, one page-1 request each: a ban is never retried in place.
        const requests = sim.requests().filter((r) => r.site === site && r.q === kw.job);
        expect(requests.map((r) => [r.page, r.outcome])).toEqual(Array.from({ length: maxRetries + 1 }, () => [1, "ban"]));
      }
    }
    expect(await server.app.services.database.reader.jobPosting.count()).toBe(0);
  });

  it("a page slower than staleAfterSeconds keeps its lease (heartbeats); a lost lease drops the keyword at once", async () => {
    fleet = await startFleet("sqlite", "slow");
    const { server, sim } = fleet;
    await server.ok(`mutation { updateSource(id: "boss", input: { staleAfterSeconds: 2 }) { id } }`);
    await server.importKeywords("boss", ["北京"], ["前端"]);
    sim.setFaults("boss", { latency: 4000 });
    const spider = spawnSpider("boss", env(fleet), ["--once"], { SITE_TIMEOUT_MS: "10000" });
    await spider.waitFor((l) => l.msg === "claimed");
    await new Promise((r) => setTimeout(r, 2600));
    // Longer than staleAfterSeconds without a page report, but the heartbeats keep it.
    await server.app.runJob("stale-sweep");
    const [kw] = await keywordsOf(server, "boss");
    expect(kw!.status).toBe("CRAWLING");
    expect(kw!.lastCompletedPage).toBe(0);

    // An operator resets it while the page is still slow: the next heartbeat is LEASE_LOST and the
    // spider drops the keyword without waiting for the page.
    await server.ok(`mutation($id: ID!) { resetKeyword(id: $id) { id } }`, { id: String(kw!.id) });
    const dropped = await spider.waitFor((l) => l.msg === "lease lost: keyword dropped");
    expect(dropped.keywordId).toBe(String(kw!.id));
    expect(spider.lines.some((l) => l.msg === "page done")).toBe(false);
    sim.setFaults("boss", {});
    // --once: the reset keyword is fresh again, so the spider claims it anew and finishes it.
    expect((await spider.exited).code).toBe(0);
    await expectExact(fleet, "boss", (await keywordsOf(server, "boss"))[0]!, 3);
  });
});
