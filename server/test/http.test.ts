// What a person opening the server in a browser gets: GraphiQL with the spider's cycle, the web
// page at /, and the health check.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GRAPHIQL_EXAMPLE } from "../src/graphiql-example.ts";
import { startServer, type TestServer } from "./harness.ts";

describe("served pages", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer("sqlite");
  });
  afterAll(() => s?.close());

  it("GraphiQL at /graphql opens with the spider's cycle, its assets inlined (works offline)", async () => {
    const r = await fetch(s.app.url(), { headers: { accept: "text/html" } });
    expect(r.status).toBe(200);
    const html = await r.text();
    expect(html).toContain("Crawl control plane");
    for (const op of ["claimKeywords", "reportPageProgress", "reportCrawlComplete", "crawlStatusDistribution"]) expect(html).toContain(op);
    expect(html).not.toMatch(/<script[^>]+src="https?:\/\//);
  });

  it("the GraphiQL document runs the whole spider cycle by hand, operation by operation", async () => {
    const run = (operationName: string, variables: Record<string, unknown> = {}) => s.ok(GRAPHIQL_EXAMPLE, { ...variables }, s.tokens.admin, operationName);
    expect((await run("ImportKeywords")).importKeywords).toEqual({ created: 4, existing: 0 });
    const [claim] = (await run("Claim")).claimKeywords;
    expect(claim).toMatchObject({ startPage: 1, resumed: false, keyword: { status: "CRAWLING" } });
    const vars = { id: claim.keyword.id, lease: claim.leaseToken };
    expect((await run("ReportPage", { ...vars, page: 1 })).reportPageProgress).toMatchObject({ lastCompletedPage: 1, jobsFound: 15 });
    expect((await run("Complete", vars)).reportCrawlComplete.status).toBe("COMPLETED");
    expect((await run("Stats")).stats).toMatchObject({ used: 1, jobsFound: 15, pagesCrawled: 1, byStatus: { completed: 1, idle: 3 } });
    const history = (await run("History", { id: claim.keyword.id })).keyword;
    expect(history.events.map((e: { to: string }) => e.to)).toEqual(["COMPLETED", "CRAWLING"]);
    expect(history.pageReports).toHaveLength(1);
  });

  it("serves the web page at / and /healthz", async () => {
    // The built dashboard, or (before `npm run build:web`) a notice saying how to build it.
    const page = await fetch(s.app.url("/"));
    const text = await page.text();
    expect(text).toContain("<title>Crawl control plane</title>");
    if (page.status === 200) expect(text).toContain('<script type="module"');
    else expect({ status: page.status, notice: text.includes("Dashboard not built") }).toEqual({ status: 503, notice: true });
    expect(await (await fetch(s.app.url("/build.ts"))).text()).not.toContain("import");
    expect(await (await fetch(s.app.url("/healthz"))).json()).toEqual({ ok: true });
  });
});
