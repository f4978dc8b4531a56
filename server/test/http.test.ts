// What a person opening the server in a browser gets: GraphiQL with the spider's cycle, the web
// page at /, and the health check.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

  it("serves the web page at / and /healthz", async () => {
    const page = await fetch(s.app.url("/"));
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("<title>Crawl control plane</title>");
    expect(await (await fetch(s.app.url("/healthz"))).json()).toEqual({ ok: true });
  });
});
