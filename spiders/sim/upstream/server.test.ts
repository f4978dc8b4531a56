import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Dataset } from "./dataset.ts";
import { startUpstreamSim, type RunningUpstreamSim } from "./server.ts";

describe("upstream simulator", () => {
  let u: RunningUpstreamSim;
  beforeAll(async () => {
    u = await startUpstreamSim({ initial: 1_000, endDay: "2026-11-29", spanDays: 90, seed: 3 });
  });
  afterAll(() => u?.close());

  const get = async (path: string, init?: RequestInit) => {
    const r = await fetch(u.url + path, init);
    return { status: r.status, body: (await r.json()) as any };
  };

  it("serves records oldest first by offset, in the collector's shape", async () => {
    const { status, body } = await get("?offset=995&limit=10");
    expect(status).toBe(200);
    expect(body.data.total).toBe(1_000);
    expect(body.data.data.map((r: { id: string }) => r.id)).toEqual(["s3-995", "s3-996", "s3-997", "s3-998", "s3-999"]);
    for (const r of body.data.data) {
      expect(r.aae397).toMatch(/^(\d{4}-\d{2}-\d{2}|\d{8}|)$/);
      expect(r.Collect_time).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    }
  });

  it("is deterministic per seed; dates spread over the span, all three date forms occur", () => {
    const a = new Dataset({ seed: 5, initial: 2_000, endDay: "2026-11-29", spanDays: 120 });
    const b = new Dataset({ seed: 5, initial: 2_000, endDay: "2026-11-29", spanDays: 120 });
    expect(a.slice(0, 2_000)).toEqual(b.slice(0, 2_000));
    expect(new Dataset({ seed: 6, initial: 2_000, endDay: "2026-11-29" }).record(10)).not.toEqual(a.record(10));
    const days = a.slice(0, 2_000).map((r) => r.Collect_time.slice(0, 10)).sort();
    expect(days[0]! <= "2026-08-02").toBe(true);
    expect(days.at(-1)).toBe("2026-11-29");
    const forms = new Set(a.slice(0, 2_000).map((r) => (r.aae397 === "" ? "missing" : r.aae397.includes("-") ? "iso" : "compact")));
    expect(forms).toEqual(new Set(["missing", "iso", "compact"]));
  });

  it("grows by appends (over HTTP too), newest last", async () => {
    expect((await get("/_append?n=5&day=2026-11-30", { method: "POST" })).body.total).toBe(1_005);
    const { body } = await get("?offset=1000&limit=100");
    expect(body.data.data).toHaveLength(5);
    expect(body.data.data[0].Collect_time.slice(0, 10)).toBe("2026-11-30");
    expect((await get("/_state")).body.total).toBe(1_005);
  });

  it("faults: a failing range answers 500 for any request touching it; bad parameters are 400", async () => {
    await get("/_faults", { method: "POST", body: JSON.stringify({ failRange: [100, 110] }) });
    expect((await get("?offset=50&limit=51")).status).toBe(500);
    expect((await get("?offset=109&limit=1")).body.error).toMatch(/permanent failure for offsets 100-109/);
    expect((await get("?offset=110&limit=10")).status).toBe(200);
    expect((await get("?offset=40&limit=60")).status).toBe(200);
    u.sim.setFaults({ failRange: null, errorRate: 1 });
    expect((await get("?offset=0&limit=1")).status).toBe(503);
    u.sim.setFaults({ errorRate: 0 });
    for (const q of ["?offset=-1&limit=1", "?offset=0&limit=1001", "?offset=x&limit=1", "?limit=1"]) expect((await get(q)).status, q).toBe(400);
  });
});
