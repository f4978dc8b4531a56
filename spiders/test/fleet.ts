// End-to-end fixtures: the real server (in process, real clock), the job-board simulator, and
// spider processes spawned as `npm run spider` runs them, so tests can SIGKILL / SIGTERM them.
import { expect } from "vitest";
import { middayTimeZone, startServer, type TestServer } from "../../server/test/harness.ts";
import { createSimServer, type LoggedRequest, type Sim } from "../sim/server.ts";
import { truth, type SiteId } from "../sim/data.ts";
import { cityCode, SITE_ADAPTERS } from "../src/sites/index.ts";

export { FAST_ENV, spawnSpider, type SpiderProcess } from "./spider-process.ts";

export interface Fleet {
  server: TestServer;
  sim: Sim;
  close(): Promise<void>;
}

export async function startFleet(provider: "sqlite" | "postgres" = "sqlite", seed = "e2e"): Promise<Fleet> {
  const server = await startServer(provider, { realClock: true, config: { CRAWL_TZ: middayTimeZone() } });
  const sim = createSimServer({ seed, holdMs: 5_000 });
  await sim.start(0);
  return {
    server,
    sim,
    async close() {
      await sim.stop();
      await server.close();
    },
  };
}

/** The city as the site's request carries it (what the simulator keys its data by). */
export const cityParam = cityCode;

/** What a perfect crawl of a keyword finds, given the source's maxPages. */
export function expected(sim: Sim, site: SiteId, city: string, job: string, maxPages: number) {
  return truth(sim.seed, site, cityParam(site, city), job, maxPages, SITE_ADAPTERS[site].pageSize);
}

/** Fetches of each page of a keyword in the simulator's request log: "page" → count. */
export function fetchesOf(log: LoggedRequest[], site: SiteId, city: string, job: string): Map<number, number> {
  const m = new Map<number, number>();
  const c = cityParam(site, city);
  for (const r of log) if (r.site === site && r.city === c && r.q === job) m.set(r.page, (m.get(r.page) ?? 0) + 1);
  return m;
}

/** Every keyword of a source, straight from the database. */
export function keywordsOf(server: TestServer, source: string) {
  return server.app.services.database.reader.keyword.findMany({ where: { sourceId: source }, orderBy: { id: "asc" } });
}

/** Postings counted for a keyword today: its sightings on the pages it reported. */
export async function sightingsOf(server: TestServer, keywordId: number) {
  return server.app.services.database.reader.postingSighting.count({ where: { keywordId } });
}

/** Assert a finished keyword matches the simulator's truth: jobsFound, postings, no page lost. */
export async function expectExact(fleet: Fleet, site: SiteId, kw: { id: number; city: string; job: string; jobsFound: number; status: string }, maxPages: number) {
  const t = expected(fleet.sim, site, kw.city, kw.job, maxPages);
  expect(kw.status, `${site} ${kw.city}/${kw.job}`).toBe("COMPLETED");
  expect(kw.jobsFound, `${site} ${kw.city}/${kw.job} jobsFound`).toBe(t.jobs);
  expect(await sightingsOf(fleet.server, kw.id)).toBe(t.jobs);
  const fetched = fetchesOf(fleet.sim.requests(), site, kw.city, kw.job);
  const pages = Math.max(t.pages, 1);
  for (let p = 1; p <= pages; p++) expect(fetched.get(p) ?? 0, `${site} ${kw.city}/${kw.job} page ${p} fetched`).toBeGreaterThanOrEqual(1);
  expect([...fetched.keys()].every((p) => p <= pages), `${site} ${kw.city}/${kw.job}: no page past the last`).toBe(true);
  return { t, fetched };
}
