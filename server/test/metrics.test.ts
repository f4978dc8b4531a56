// /metrics exposes what the state machine did, in Prometheus text format.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClaimKeywordsDocument, ReportPageProgressDocument } from "../../spiders/src/gql/graphql.ts";
import { ageHeartbeat, cities, startServer, type TestServer } from "./harness.ts";
import { spawnServer } from "./process.ts";
import { createTestDatabase, testProviders } from "./databases.ts";

describe("/metrics", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer("sqlite");
  });
  afterAll(() => s?.close());

  it("counts claims, page reports and transitions, times operations, and shows keywords per status", async () => {
    await s.importKeywords("boss", ["北京", "上海"], ["Java"]);
    const [c] = (await s.ok(ClaimKeywordsDocument, { source: "boss", crawlerId: "m", limit: 1 }, s.tokens.spider)).claimKeywords;
    for (const page of [1, 2, 3]) {
      await s.ok(ReportPageProgressDocument, { input: { keywordId: c!.keyword.id, leaseToken: c!.leaseToken, page, jobsFound: 4 } }, s.tokens.spider);
    }
    const res = await fetch(s.app.url("/metrics"));
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('crawl_claims_total{source="boss",kind="claim"} 1');
    expect(text).toContain('crawl_page_reports_total{source="boss"} 3');
    expect(text).toContain('crawl_transitions_total{source="boss",from="IDLE",to="CRAWLING",reason="claim"} 1');
    expect(text).toContain('crawl_transitions_total{source="boss",from="CRAWLING",to="COMPLETED",reason="last page"} 1');
    expect(text).toMatch(/graphql_operation_duration_seconds_count\{field="reportPageProgress",type="mutation",outcome="ok"\} 3/);
    expect(text).toContain('crawl_keywords{source="boss",status="COMPLETED"} 1');
    expect(text).toContain('crawl_keywords{source="boss",status="IDLE"} 1');
    expect(text).toContain("process_cpu_seconds_total");
    // SQLite: WAL checkpoints on a thread of their own (server/src/db/checkpoint-worker.mjs).
    expect(text).toContain("sqlite_checkpointer_up 1");
    expect(text).toMatch(/sqlite_checkpoints_total\{mode="passive"\} [1-9]/);
    expect(text).toMatch(/sqlite_wal_pages \d+/);
  });

  it("times claims, counts sweeps and their results, and counts live sockets and subscriptions by field", async () => {
    await s.importKeywords("qcwy", ["杭州"], ["Go"]);
    const [c] = (await s.ok(ClaimKeywordsDocument, { source: "qcwy", crawlerId: "m2", limit: 1 }, s.tokens.spider)).claimKeywords;
    await ageHeartbeat(s, c!.keyword.id, 3600);
    expect(await s.app.runJob("stale-sweep")).toBe(1);
    const client = s.ws();
    const seen: unknown[] = [];
    const stop = [
      client.subscribe({ query: `subscription { keywordChanged { id } }` }, { next: (v) => seen.push(v), error: () => {}, complete: () => {} }),
      client.subscribe({ query: `subscription { crawlStatusDistribution(source: "boss") { total } }` }, { next: (v) => seen.push(v), error: () => {}, complete: () => {} }),
    ];
    while (seen.length < 1) await new Promise((r) => setTimeout(r, 20)); // the distribution's first value: the socket is up
    const text = await (await fetch(s.app.url("/metrics"))).text();
    expect(text).toMatch(/crawl_claim_duration_seconds_count\{outcome="ok"\} [1-9]/);
    expect(text).toContain('crawl_sweep_keywords_total{job="stale",source="qcwy"} 1');
    expect(text).toContain('crawl_transitions_total{source="qcwy",from="CRAWLING",to="PARTIAL",reason="stale"} 1');
    expect(text).toContain('crawl_job_runs_total{job="stale-sweep",outcome="ok"} 1');
    expect(text).toContain('crawl_job_last_run_keywords{job="stale-sweep"} 1');
    expect(text).toContain("graphql_ws_connections 1");
    expect(text).toContain('graphql_ws_operations{field="keywordChanged"} 1');
    expect(text).toContain('graphql_ws_operations{field="crawlStatusDistribution"} 1');
    expect(text).toContain("graphql_ws_subscriptions 1");
    for (const f of stop) f();
  });
});

describe.each((await testProviders()).filter((p) => p === "postgres"))("/metrics on %s", (provider) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer(provider);
  });
  afterAll(() => s?.close());

  it("shows how many requests each coalesced statement served", async () => {
    await s.importKeywords("boss", cities(8), ["Rust"]);
    // Eight claims at once, then their first pages at once.
    const claims = await Promise.all(
      Array.from({ length: 8 }, (_, i) => s.ok(ClaimKeywordsDocument, { source: "boss", crawlerId: `c${i}`, limit: 1 }, s.tokens.spider)),
    );
    await Promise.all(
      claims.map(({ claimKeywords: [c] }) =>
        s.ok(ReportPageProgressDocument, { input: { keywordId: c!.keyword.id, leaseToken: c!.leaseToken, page: 1, jobsFound: 1 } }, s.tokens.spider),
      ),
    );
    const text = await (await fetch(s.app.url("/metrics"))).text();
    const sum = (kind: string) => Number(text.match(new RegExp(`crawl_coalesced_requests_sum\\{kind="${kind}"\\} (\\d+)`))?.[1]);
    const count = (kind: string) => Number(text.match(new RegExp(`crawl_coalesced_requests_count\\{kind="${kind}"\\} (\\d+)`))?.[1]);
    // Every request counted once; how many statements served them depends on how the requests
    // fell into turns (server/test/coalesced-writes.test.ts pins that down at the store).
    expect(sum("claims")).toBe(8);
    expect(sum("page_reports")).toBe(8);
    expect(count("claims")).toBeGreaterThanOrEqual(1);
    expect(count("page_reports")).toBeGreaterThanOrEqual(1);
  });
});

describe("logs", () => {
  it("are structured: every line the server writes is a pino JSON object with level, time, name and msg", async () => {
    const tdb = await createTestDatabase("sqlite");
    const server = await spawnServer({ DATABASE_URL: tdb.url });
    try {
      await fetch(server.url, { method: "POST", headers: { "content-type": "application/json" }, body: "{ broken" });
      const lines = server.output().split("\n").filter(Boolean);
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) {
        const entry = JSON.parse(line);
        expect(entry).toMatchObject({ level: expect.any(Number), time: expect.any(Number), name: "crawl-control-plane", msg: expect.any(String) });
      }
      expect(lines.some((l) => JSON.parse(l).msg.includes("listening"))).toBe(true);
    } finally {
      await server.kill();
      await tdb.drop();
    }
  });
});
