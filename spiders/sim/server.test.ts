// The simulator itself: deterministic data per seed, the three sites under their prefixes, faults
// by query and by environment, the request log, reset, and extra mounts.
import { afterEach, describe, expect, it } from "vitest";
import { boss } from "../src/sites/boss.ts";
import { qcwy } from "../src/sites/qcwy.ts";
import { zhilian } from "../src/sites/zhilian.ts";
import { cityCode } from "../src/sites/index.ts";
import { pagePostings, posting, truth } from "./data.ts";
import { createSimServer, type Sim } from "./server.ts";

describe("job-board simulator", () => {
  let sim: Sim | undefined;
  afterEach(() => sim?.stop());

  it("same seed → same postings; another seed → others", () => {
    const a = pagePostings("s1", "qcwy", "010000", "前端", 2, 20);
    expect(pagePostings("s1", "qcwy", "010000", "前端", 2, 20)).toEqual(a);
    expect(pagePostings("s2", "qcwy", "010000", "前端", 2, 20).map((p) => p.externalId)).not.toEqual(a.map((p) => p.externalId));
    // Two searches in one city share their first postings (deduplication has something to do).
    const id = (q: string, i: number) => posting("s1", "boss", "101010100", q, i).externalId;
    expect([id("前端", 0), id("前端", 1)]).toEqual([id("后端", 0), id("后端", 1)]);
    expect(id("前端", 2)).not.toBe(id("后端", 2));
  });

  it("serves each site's API shape under its prefix, parseable by its adapter, to the last page", async () => {
    sim = createSimServer({ seed: "shape" });
    await sim.start(0);
    for (const adapter of [boss, qcwy, zhilian]) {
      const base = sim.url(`/${adapter.id}`);
      const kw = { city: "北京", job: "前端" };
      const seen: string[] = [];
      for (let page = 1; ; page++) {
        const req = adapter.request(base, kw, page);
        const res = await fetch(req.url, req.init);
        const parsed = adapter.parse(res.status, await res.text(), page);
        seen.push(...parsed.postings.map((p) => p.externalId));
        if (parsed.last || page >= 60) break;
      }
      expect(seen).toEqual(truth("shape", adapter.id, cityCode(adapter.id, "北京"), "前端", 1000, adapter.pageSize).postings);
    }
    expect(sim.requests().every((r) => r.outcome === "ok")).toBe(true);
  });

  it("faults set by query change what a site answers, and are logged; reset clears log and faults", async () => {
    sim = createSimServer({ seed: "faults" });
    await sim.start(0);
    const r = await fetch(sim.url("/_sim/faults?site=boss&ban=1"), { method: "POST" });
    expect((await r.json()).boss).toMatchObject({ ban: 1, error: 0 });
    const req = boss.request(sim.url("/boss"), { city: "北京", job: "x" }, 1);
    const body = await (await fetch(req.url)).json();
    expect(body).toMatchObject({ code: 37 });
    const e = await fetch(sim.url("/_sim/faults?site=qcwy&error=1"), { method: "POST" });
    expect(e.status).toBe(200);
    const q = qcwy.request(sim.url("/qcwy"), { city: "北京", job: "x" }, 1);
    expect((await fetch(q.url)).status).toBe(503);
    expect((await fetch(sim.url("/_sim/faults?site=qcwy&nonsense=1"), { method: "POST" })).status).toBe(400);
    const log = await (await fetch(sim.url("/_sim/requests"))).json();
    expect(log.map((l: { site: string; outcome: string }) => [l.site, l.outcome])).toEqual([
      ["boss", "ban"],
      ["qcwy", "error"],
    ]);
    await fetch(sim.url("/_sim/reset"), { method: "POST" });
    expect(await (await fetch(sim.url("/_sim/requests"))).json()).toEqual([]);
    expect((await fetch(q.url)).status).toBe(200);
  });

  it("reads faults from SIM_FAULTS_<SITE> and truncates JSON on demand", async () => {
    process.env.SIM_FAULTS_ZHILIAN = "truncate=1,latency=1";
    try {
      sim = createSimServer({ seed: "env" });
    } finally {
      delete process.env.SIM_FAULTS_ZHILIAN;
    }
    await sim.start(0);
    const req = zhilian.request(sim.url("/zhilian"), { city: "北京", job: "前端" }, 1);
    const res = await fetch(req.url, req.init);
    const text = await res.text();
    expect(() => zhilian.parse(res.status, text, 1)).toThrow(/malformed JSON/);
    expect(sim.requests()[0]).toMatchObject({ site: "zhilian", outcome: "truncate", page: 1, q: "前端", city: "530" });
  });

  it("takes extra route handlers by path prefix", async () => {
    sim = createSimServer({
      mounts: [{ prefix: "/upstream", handler: (_req, res) => void res.writeHead(200, { "content-type": "text/plain" }).end("mounted") }],
    });
    await sim.start(0);
    expect(await (await fetch(sim.url("/upstream/anything"))).text()).toBe("mounted");
    expect((await fetch(sim.url("/upstreamx"))).status).toBe(404);
  });
});
