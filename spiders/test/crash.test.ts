// A spider SIGKILLed in the middle of a keyword, at random pages: after the stale sweep a second
// spider resumes at the next page — no page lost, at most the page in flight fetched twice, and
// jobsFound exact. Also a graceful SIGTERM: the keyword is PARTIAL at once and resumable.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testProviders } from "../../server/test/databases.ts";
import { ageHeartbeat } from "../../server/test/harness.ts";
import { pageCount } from "../sim/data.ts";
import { cityParam, expectExact, fetchesOf, type Fleet, keywordsOf, spawnSpider, startFleet } from "./fleet.ts";

/** qcwy jobs in 北京 with at least `min` pages in the simulator (deterministic for a seed). */
function longKeywords(seed: string, n: number, min: number) {
  const out: string[] = [];
  for (let i = 0; out.length < n; i++) if (pageCount(seed, "qcwy", cityParam("qcwy", "北京"), `岗位${i}`, 20) >= min) out.push(`岗位${i}`);
  return out;
}

describe.each(await testProviders())("spiders that die or stop mid-keyword on %s", (provider) => {
  let fleet: Fleet;
  const env = () => ({ apiUrl: fleet.server.app.url(), token: fleet.server.tokens.spider, simUrl: fleet.sim.url() });
  beforeAll(async () => {
    fleet = await startFleet(provider, "crash");
    // Slow enough that a kill lands in the middle of a keyword.
    fleet.sim.setFaults("qcwy", { latency: 15 });
  });
  afterAll(() => fleet?.close());

  const ROUNDS = 3;
  const jobs = () => longKeywords("crash", ROUNDS + 2, 25);

  it.each(Array.from({ length: ROUNDS }, (_, i) => i))("SIGKILL at a random page, round %i: resumed after the sweep, exact", async (round) => {
    const { server, sim } = fleet;
    const job = jobs()[round]!;
    await server.importKeywords("qcwy", ["北京"], [job]);
    const killAt = 2 + Math.floor(Math.random() * 20);
    const a = spawnSpider("qcwy", env(), ["--once", "--concurrency", "1"]);
    await a.waitFor((l) => l.msg === "page done" && l.page === killAt);
    a.kill("SIGKILL");
    expect((await a.exited).signal).toBe("SIGKILL");

    const kw = (await keywordsOf(server, "qcwy")).find((k) => k.job === job)!;
    expect(kw.status).toBe("CRAWLING");
    expect(kw.lastCompletedPage).toBeGreaterThanOrEqual(killAt);
    // The spider is dead: no heartbeat comes. Let staleAfterSeconds pass, then run the sweep.
    await ageHeartbeat(server, String(kw.id), 3600);
    await server.app.runJob("stale-sweep");
    const swept = (await keywordsOf(server, "qcwy")).find((k) => k.id === kw.id)!;
    expect(swept.status).toBe("PARTIAL");

    const b = spawnSpider("qcwy", env(), ["--once", "--concurrency", "1"]);
    const claimed = await b.waitFor((l) => l.msg === "claimed");
    expect(claimed).toMatchObject({ startPage: swept.lastCompletedPage + 1, resumed: true });
    expect((await b.exited).code).toBe(0);

    const done = (await keywordsOf(server, "qcwy")).find((k) => k.id === kw.id)!;
    await expectExact(fleet, "qcwy", done, 50);
    const fetched = fetchesOf(sim.requests(), "qcwy", "北京", job);
    const twice = [...fetched].filter(([, n]) => n > 1);
    // At most the page in flight at the kill — the one the second spider started at — twice.
    expect(twice.length).toBeLessThanOrEqual(1);
    for (const [page, n] of twice) {
      expect(n).toBe(2);
      expect(page).toBe(claimed.startPage);
    }
    console.log(`crash round ${round}: killed after page ${killAt}, resumed at ${claimed.startPage}, pages re-fetched: ${twice.length}`);
  });

  it("swept while alive (no heartbeat for too long): the old spider's next write is LEASE_LOST, it drops the keyword, the new holder finishes", async () => {
    const { server, sim } = fleet;
    const job = jobs()[ROUNDS + 1]!;
    await server.importKeywords("qcwy", ["北京"], [job]);
    const a = spawnSpider("qcwy", env(), ["--once", "--concurrency", "1"]);
    const page = await a.waitFor((l) => l.msg === "page done" && l.page === 3);
    const [kw] = (await keywordsOf(server, "qcwy")).filter((k) => k.job === job);
    await ageHeartbeat(server, String(kw!.id), 3600);
    await server.app.runJob("stale-sweep");
    const b = spawnSpider("qcwy", env(), ["--once", "--concurrency", "1"]);
    const dropped = await a.waitFor((l) => l.msg === "lease lost: keyword dropped");
    expect(dropped).toMatchObject({ keywordId: page.keywordId });
    expect((await a.exited).code).toBe(0);
    expect((await b.exited).code).toBe(0);
    await expectExact(fleet, "qcwy", (await keywordsOf(server, "qcwy")).find((k) => k.id === kw!.id)!, 50);
    const twice = [...fetchesOf(sim.requests(), "qcwy", "北京", job)].filter(([, n]) => n > 1);
    expect(twice.length).toBeLessThanOrEqual(1); // the page A had in flight when it lost the lease
  });

  it("SIGTERM: released at once (PARTIAL, no sweep), exit 0, and resumable", async () => {
    const { server, sim } = fleet;
    const job = jobs()[ROUNDS]!;
    await server.importKeywords("qcwy", ["北京"], [job]);
    const a = spawnSpider("qcwy", env(), ["--concurrency", "1"]);
    await a.waitFor((l) => l.msg === "page done" && l.page === 3);
    a.kill("SIGTERM");
    expect((await a.exited).code).toBe(0);
    expect(a.lines.some((l) => l.msg === "released (stopping)")).toBe(true);

    const kw = (await keywordsOf(server, "qcwy")).find((k) => k.job === job)!;
    expect(kw.status).toBe("PARTIAL");
    expect(kw.lastCompletedPage).toBeGreaterThanOrEqual(3);

    const b = spawnSpider("qcwy", env(), ["--once"]);
    expect(await b.waitFor((l) => l.msg === "claimed")).toMatchObject({ startPage: kw.lastCompletedPage + 1, resumed: true });
    expect((await b.exited).code).toBe(0);
    const done = (await keywordsOf(server, "qcwy")).find((k) => k.id === kw.id)!;
    await expectExact(fleet, "qcwy", done, 50);
    const twice = [...fetchesOf(sim.requests(), "qcwy", "北京", job)].filter(([, n]) => n > 1);
    expect(twice.length).toBeLessThanOrEqual(1); // the dropped in-flight page
  });
});
