// /metrics exposes what the state machine did, in Prometheus text format.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClaimKeywordsDocument, ReportPageProgressDocument } from "../../spiders/src/gql/graphql.ts";
import { startServer, type TestServer } from "./harness.ts";

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
  });
});
