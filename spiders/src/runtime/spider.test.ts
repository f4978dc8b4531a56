// The crawl loop against a scripted server and site: when `--once` may stop.
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { SiteBlocked } from "../sites/site.ts";
import type { ServerClient } from "./server-client.ts";
import type { SiteFetcher } from "./site-fetcher.ts";
import { Spider } from "./spider.ts";

const opName = (doc: unknown) => (doc as { definitions: { name?: { value: string } }[] }).definitions[0]!.name!.value;

describe("Spider --once", () => {
  it("does not stop on an empty claim asked while its own keyword was failing: it asks again", async () => {
    // One keyword that the site bans on every attempt; the server allows 3 retries. The second
    // claim (asked while the first attempt is still failing) is answered only after that failure
    // was recorded — empty, as the server read the keyword as CRAWLING — exactly the race in which
    // the spider used to exit with retries left.
    const maxRetries = 3;
    let attempts = 0;
    let failed = 0;
    let failing: Promise<void> | undefined;
    const calls: string[] = [];
    const keyword = { id: "1", sourceId: "boss", city: "北京", job: "前端", totalPages: 0 };
    const client = {
      async request(doc: unknown, vars: { limit?: number }) {
        const op = opName(doc);
        calls.push(op);
        if (op === "ClaimKeywords") {
          if (calls.filter((c) => c === "ClaimKeywords").length === 2) {
            await failing; // answered after the failure, read before it
            return { claimKeywords: [] };
          }
          const claimable = failed === attempts && attempts <= maxRetries;
          if (!claimable) return { claimKeywords: [] };
          attempts++;
          return { claimKeywords: [{ keyword, leaseToken: `lease-${attempts}`, startPage: 1, resumed: false }].slice(0, vars.limit) };
        }
        if (op === "ReportCrawlComplete") {
          failed++;
          return { reportCrawlComplete: { id: "1", status: "FAILED" } };
        }
        return {};
      },
    } as unknown as ServerClient;
    let fetched = 0;
    const fetcher = {
      async fetch() {
        fetched++;
        // The first attempt's failure is reported while the second claim is on its way.
        if (fetched === 1) {
          let done!: () => void;
          failing = new Promise<void>((r) => (done = r));
          setTimeout(done, 20);
          await new Promise((r) => setTimeout(r, 5));
        }
        throw new SiteBlocked("banned");
      },
    } as unknown as SiteFetcher;
    const spider = new Spider({
      site: "boss", crawlerId: "t", client, fetcher, concurrency: 2, once: true, pollMs: 10, log: pino({ level: "silent" }),
    });
    const totals = await spider.run();
    expect(attempts).toBe(maxRetries + 1);
    expect(totals.failed).toBe(maxRetries + 1);
  });
});
