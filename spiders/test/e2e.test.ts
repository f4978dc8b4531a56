// End to end: the real server, the simulator and one spider process per site crawl 30 keywords to
// COMPLETED. Every page is fetched exactly once, jobsFound per keyword is the simulator's truth,
// and postings seen by several keywords are stored once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testProviders } from "../../server/test/databases.ts";
import { SITES, type SiteId } from "../sim/data.ts";
import { expected, expectExact, fetchesOf, type Fleet, keywordsOf, spawnSpider, startFleet } from "./fleet.ts";

const CITIES = ["北京", "上海", "深圳", "杭州", "成都"];
const JOBS = ["前端", "后端"];

describe.each(await testProviders())("three spiders crawl 30 keywords end to end on %s", (provider) => {
  let fleet: Fleet;
  beforeAll(async () => {
    fleet = await startFleet(provider, "e2e");
  });
  afterAll(() => fleet?.close());

  it("completes every keyword with exact counts, each page fetched once, postings deduplicated", async () => {
    const { server, sim } = fleet;
    for (const site of SITES) await server.importKeywords(site, CITIES, JOBS);
    const sources = (await server.ok(`{ sources { id maxPages } }`)).sources as { id: SiteId; maxPages: number }[];
    const maxPages = Object.fromEntries(sources.map((s) => [s.id, s.maxPages])) as Record<SiteId, number>;
    expect(maxPages).toEqual({ boss: 3, qcwy: 50, zhilian: 15 });

    const spiders = SITES.map((site) =>
      spawnSpider(site, { apiUrl: server.app.url(), token: server.tokens.spider, simUrl: sim.url() }, ["--once", "--concurrency", "3"]),
    );
    const exits = await Promise.all(spiders.map((s) => s.exited));
    expect(exits.every((e) => e.code === 0)).toBe(true);
    // Hundreds of pages per process leave no listeners behind (Node warns past 10 on one signal).
    for (const s of spiders) expect(s.stderr()).not.toMatch(/Warning/);

    const log = sim.requests();
    let keywords = 0;
    for (const site of SITES) {
      const distinct = new Set<string>();
      for (const kw of await keywordsOf(server, site)) {
        keywords++;
        const { t, fetched } = await expectExact(fleet, site, kw, maxPages[site]);
        for (const [page, n] of fetched) expect(n, `${site} ${kw.city}/${kw.job} page ${page}`).toBe(1);
        for (const id of t.postings) distinct.add(id);
      }
      // Keywords of one city share postings: stored once per (source, externalId).
      const stored = await server.app.services.database.reader.jobPosting.count({ where: { sourceId: site } });
      expect(stored).toBe(distinct.size);
      const total = (await keywordsOf(server, site)).reduce((n, k) => n + k.jobsFound, 0);
      expect(stored).toBeLessThan(total);
    }
    expect(keywords).toBe(30);
    // Nothing but these keywords' pages was asked for.
    const expectedFetches = SITES.flatMap((site) =>
      CITIES.flatMap((city) => JOBS.map((job) => Math.max(expected(sim, site, city, job, maxPages[site]).pages, 1))),
    ).reduce((a, b) => a + b, 0);
    expect(log).toHaveLength(expectedFetches);
    expect(fetchesOf(log, "boss", "北京", "前端").size).toBeGreaterThan(0);
    // The stats agree with the keywords.
    for (const site of SITES) {
      const st = (await server.ok(`query($s: ID!) { stats(source: $s) { jobsFound byStatus { completed } } }`, { s: site })).stats;
      const kws = await keywordsOf(server, site);
      expect(st).toEqual({ jobsFound: kws.reduce((n, k) => n + k.jobsFound, 0), byStatus: { completed: 10 } });
    }
  });
});
