// Two server processes on one PostgreSQL database; one is killed (SIGKILL) in the middle of a load
// of page reports spread over both. The other keeps serving — the spiders that were on the dead one
// retry there and carry on — and no acknowledged report is lost: every one is stored, and every
// keyword's counters agree with its stored pages.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { crossProduct, importKeywords } from "../src/keywords/import.ts";
import { servicesAvailable } from "./databases.ts";
import { cities } from "./harness.ts";
import { type Cluster, gql, ok, startCluster } from "./instances.ts";

const KEYWORDS = 100;
const PAGES = 20;
const WORKERS = 16;
const KILL_AFTER = 400;
const CLAIM = `mutation { claimKeywords(source: "qcwy", crawlerId: "survivor", limit: 100) { keyword { id } leaseToken } }`;
const REPORT = `mutation($i: ReportPageProgressInput!) { reportPageProgress(input: $i) { id lastCompletedPage } }`;

describe.skipIf(!(await servicesAvailable("instance killed under load", ["postgres"])))("one of two instances killed under load", () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster(2, {}, (db) => importKeywords(db, "qcwy", crossProduct(cities(KEYWORDS), ["kill"])).then(() => {}));
  }, 120_000);
  afterAll(() => cluster?.close());

  it("the other keeps serving and every acknowledged report is kept", async () => {
    const { servers, tokens, db } = cluster;
    const [a, b] = servers as [(typeof servers)[0], (typeof servers)[0]];
    const claims: { keyword: { id: string }; leaseToken: string }[] = (await ok(a.url, tokens.spider, CLAIM)).claimKeywords;
    expect(claims).toHaveLength(KEYWORDS);

    const acked: { id: string; page: number; by: "a" | "b"; afterKill: boolean }[] = [];
    let killed = false;
    let next = 0;
    const worker = async (w: number) => {
      let on: "a" | "b" = w % 2 === 0 ? "a" : "b";
      for (;;) {
        const i = next++;
        if (i >= KEYWORDS * PAGES) return;
        const c = claims[i % KEYWORDS]!;
        const input = { keywordId: c.keyword.id, leaseToken: c.leaseToken, page: Math.floor(i / KEYWORDS) + 1, jobsFound: 10 };
        for (;;) {
          // Sent once A had exited: A cannot be the one that answers it.
          const sentAfterKill = killed;
          let r;
          try {
            r = await gql((on === "a" ? a : b).url, tokens.spider, REPORT, { i: input });
          } catch {
            // The instance is gone: as a spider behind a load balancer would, send it again elsewhere.
            if (on === "b") throw new Error("instance B stopped answering");
            on = "b";
            continue;
          }
          if (r.errors) throw new Error(JSON.stringify(r.errors));
          acked.push({ id: c.keyword.id, page: input.page, by: on, afterKill: sentAfterKill });
          break;
        }
      }
    };
    const workers = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
    while (acked.length < KILL_AFTER) await new Promise((r) => setTimeout(r, 5));
    await a.kill("SIGKILL"); // resolves once the process has exited
    killed = true;
    await workers;

    // Both served before the kill; B alone served after it, and every report was acknowledged.
    expect(acked.filter((x) => !x.afterKill && x.by === "a").length).toBeGreaterThan(0);
    expect(acked.filter((x) => x.afterKill).length).toBeGreaterThan(KEYWORDS);
    expect(acked.filter((x) => x.afterKill && x.by === "a")).toEqual([]);
    expect(acked.length).toBe(KEYWORDS * PAGES);
    expect(a.child.signalCode).toBe("SIGKILL");

    // Everything acknowledged is stored, counted once.
    const reports = await db.reader.pageReport.findMany({ where: { sourceId: "qcwy" } });
    const stored = new Set(reports.map((r) => `${r.keywordId}:${r.page}`));
    expect(acked.filter((x) => !stored.has(`${x.id}:${x.page}`))).toEqual([]);
    expect(reports).toHaveLength(KEYWORDS * PAGES);
    const keywords = await db.reader.keyword.findMany({ where: { sourceId: "qcwy" } });
    for (const k of keywords) {
      const mine = reports.filter((r) => r.keywordId === k.id);
      expect({ jobsFound: k.jobsFound, pagesCrawled: k.pagesCrawled, lastCompletedPage: k.lastCompletedPage, status: k.status })
        .toEqual({ jobsFound: 10 * PAGES, pagesCrawled: PAGES, lastCompletedPage: PAGES, status: "CRAWLING" });
      expect(mine).toHaveLength(PAGES);
    }
    // The survivor's view (the day's counters) agrees.
    const stats = (await ok(b.url, tokens.admin, `{ stats(source: "qcwy") { byStatus { crawling } jobsFound pagesCrawled } }`)).stats;
    expect(stats).toEqual({ byStatus: { crawling: KEYWORDS }, jobsFound: KEYWORDS * PAGES * 10, pagesCrawled: KEYWORDS * PAGES });
  }, 120_000);
});
