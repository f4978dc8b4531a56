// The dashboard in a real browser (Debian's Chromium driven by playwright-core) against the real
// server: counts equal `stats`, API mutations show within 2 s without a reload, the keywords table
// filters, an admin imports through the UI, a viewer sees no actions, and the page recovers by
// itself when the server process is killed and started again. Screenshots go to
// test-artifacts/e2e/. Also checks the production bundle's size.
import { mkdirSync } from "node:fs";
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { ClaimKeywordsDocument, ReportCrawlCompleteDocument, ReportPageProgressDocument } from "../../spiders/src/gql/graphql.ts";
import { createToken, Role } from "../../server/src/auth/tokens.ts";
import { openDatabase } from "../../server/src/db/client.ts";
import { migrate } from "../../server/src/db/migrate.ts";
import { seedSources } from "../../server/src/db/seed.ts";
import { createTestDatabase } from "../../server/test/databases.ts";
import { middayTimeZone, startServer, type TestServer } from "../../server/test/harness.ts";
import { type ServerProcess, spawnServer } from "../../server/test/process.ts";
import { bundleSize, ensureBuild } from "../build.ts";
import { ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, chromiumIsMissing, openDashboard, shot, waitStatus } from "./browser.ts";

/** The promise: a change made through the API is on screen within 2 s, no reload. */
const LIVE_MS = 2_000;
const BUNDLE_LIMIT_KB = 250;
const STATES = ["IDLE", "CRAWLING", "COMPLETED", "FAILED", "PARTIAL"] as const;
type Counts = Record<(typeof STATES)[number], number>;

const chromiumMissing = chromiumIsMissing();

beforeAll(() => ensureBuild((line) => console.log(line)), 120_000);

describe("production bundle", () => {
  it(`is at most ${BUNDLE_LIMIT_KB} KB gzip`, () => {
    const { raw, gzip } = bundleSize();
    console.log(`[web] bundle: ${(raw / 1024).toFixed(1)} KB raw, ${(gzip / 1024).toFixed(1)} KB gzip (limit ${BUNDLE_LIMIT_KB} KB)`);
    expect(gzip).toBeGreaterThan(0);
    expect(gzip / 1024).toBeLessThanOrEqual(BUNDLE_LIMIT_KB);
  });
});

/** The five counts a state diagram shows, read from its data-source/data-state nodes. */
function readCounts(page: Page, source: string): Promise<Record<string, string | null>> {
  return page.evaluate(
    ([src, states]) => Object.fromEntries(states.map((st) => [st, document.querySelector(`[data-source="${src}"][data-state="${st}"]`)?.textContent ?? null])),
    [source, STATES] as const,
  );
}

/** Wait (at most `timeout` ms) until the diagram of `source` shows exactly `want`. */
async function waitCounts(page: Page, source: string, want: Counts, timeout = LIVE_MS) {
  try {
    await page.waitForFunction(
      ([src, w]) =>
        Object.entries(w).every(([st, n]) => document.querySelector(`[data-source="${src}"][data-state="${st}"]`)?.textContent === String(n)),
      [source, want] as const,
      { timeout, polling: 50 },
    );
  } catch {
    throw new Error(`${source}: wanted ${JSON.stringify(want)} within ${timeout} ms, the page shows ${JSON.stringify(await readCounts(page, source))}`);
  }
}

describe.skipIf(chromiumMissing)("dashboard in Chromium", () => {
  let browser: Browser;
  let s: TestServer;
  const contexts: BrowserContext[] = [];

  const open = (token: string | null, viewport = { width: 1280, height: 900 }) => openDashboard(browser, contexts, s.app.url("/"), token, viewport);

  async function stats(source: string): Promise<Counts> {
    const d = await s.ok(`query($s: ID!) { stats(source: $s) { byStatus { idle crawling completed failed partial } } }`, { s: source });
    const b = d.stats.byStatus;
    return { IDLE: b.idle, CRAWLING: b.crawling, COMPLETED: b.completed, FAILED: b.failed, PARTIAL: b.partial };
  }

  const claim = async (source: string, crawlerId: string) => {
    const d = await s.ok(ClaimKeywordsDocument, { source, crawlerId, limit: 1 }, s.tokens.spider);
    expect(d.claimKeywords).toHaveLength(1);
    return d.claimKeywords[0]!;
  };

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    s = await startServer("sqlite");
    await s.importKeywords("boss", ["beijing", "shanghai", "guangzhou"], ["java", "python"]);
    await s.importKeywords("qcwy", ["chengdu", "wuhan"], ["java", "sales"]);
    // Some history before the page opens: one keyword crawling with a page done, one failed.
    const a = await claim("boss", "spider-a");
    await s.ok(ReportPageProgressDocument, { input: { keywordId: a.keyword.id, leaseToken: a.leaseToken, page: 1, jobsFound: 12 } }, s.tokens.spider);
    const b = await claim("boss", "spider-b");
    await s.ok(
      ReportCrawlCompleteDocument,
      { input: { keywordId: b.keyword.id, leaseToken: b.leaseToken, status: "FAILED", errorMessage: "banned by the site" } },
      s.tokens.spider,
    );
  }, 120_000);

  afterAll(async () => {
    for (const c of contexts) await c.close();
    await browser?.close();
    await s?.close();
  });

  it("shows every source's counts equal to stats, and API changes within 2 s without a reload", async () => {
    const { page, errors } = await open(s.tokens.admin);
    for (const source of ["boss", "qcwy", "zhilian"]) await waitCounts(page, source, await stats(source), 5_000);
    expect(await readCounts(page, "boss")).toEqual({ IDLE: "4", CRAWLING: "1", COMPLETED: "0", FAILED: "1", PARTIAL: "0" });
    await shot(page, "01-admin-loaded");
    const navigations: string[] = [];
    page.on("framenavigated", (f) => navigations.push(f.url()));

    // Claim: qcwy IDLE → CRAWLING.
    const c = await claim("qcwy", "spider-e2e");
    await waitCounts(page, "qcwy", { IDLE: 3, CRAWLING: 1, COMPLETED: 0, FAILED: 0, PARTIAL: 0 });
    // Report its only page (totalPages 1): CRAWLING → COMPLETED.
    await s.ok(ReportPageProgressDocument, { input: { keywordId: c.keyword.id, leaseToken: c.leaseToken, page: 1, totalPages: 1, jobsFound: 9 } }, s.tokens.spider);
    await waitCounts(page, "qcwy", { IDLE: 3, CRAWLING: 0, COMPLETED: 1, FAILED: 0, PARTIAL: 0 });
    // Complete: another claim finished by reportCrawlComplete.
    const d = await claim("qcwy", "spider-e2e");
    await waitCounts(page, "qcwy", { IDLE: 2, CRAWLING: 1, COMPLETED: 1, FAILED: 0, PARTIAL: 0 });
    await s.ok(ReportCrawlCompleteDocument, { input: { keywordId: d.keyword.id, leaseToken: d.leaseToken, status: "COMPLETED" } }, s.tokens.spider);
    await waitCounts(page, "qcwy", { IDLE: 2, CRAWLING: 0, COMPLETED: 2, FAILED: 0, PARTIAL: 0 });
    expect(await stats("qcwy")).toEqual({ IDLE: 2, CRAWLING: 0, COMPLETED: 2, FAILED: 0, PARTIAL: 0 });
    // Today's transitions on the arrows follow too.
    await page.waitForFunction(
      () => document.querySelector('[data-source="qcwy"][data-from="CRAWLING"][data-to="COMPLETED"] .arrow-count')?.textContent === "2",
      undefined,
      { timeout: LIVE_MS },
    );
    expect(navigations).toEqual([]);
    await shot(page, "02-after-api-mutations");
    expect(errors).toEqual([]);
  });

  it("filters the keywords table by source, status and search; a row opens its history", async () => {
    const { page } = await open(s.tokens.admin);
    const table = page.locator("section.keywords");
    const total = table.getByTestId("keywords-total");
    const rows = () =>
      table.locator("tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].slice(0, 4).map((td) => td.textContent)));
    await total.filter({ hasText: "10 keywords" }).waitFor();

    await table.getByLabel("Source").selectOption("qcwy");
    await total.filter({ hasText: /^4 keywords$/ }).waitFor();
    expect((await rows()).every((r) => r[0] === "qcwy")).toBe(true);

    await table.getByLabel("Status").selectOption("COMPLETED");
    await total.filter({ hasText: /^2 keywords$/ }).waitFor();
    expect((await rows()).map((r) => r[3])).toEqual(["COMPLETED", "COMPLETED"]);

    await table.getByLabel("Status").selectOption("");
    await table.getByLabel("Source").selectOption("");
    await table.getByLabel("Search").fill("shang");
    await total.filter({ hasText: /^2 keywords$/ }).waitFor();
    expect(await rows()).toEqual([
      ["boss", "shanghai", "java", "IDLE"],
      ["boss", "shanghai", "python", "IDLE"],
    ]);

    await table.getByLabel("Search").fill("");
    await table.getByLabel("Status").selectOption("FAILED");
    await total.filter({ hasText: /^1 keywords$/ }).waitFor();
    await table.locator("tbody tr").first().click();
    const detail = page.getByTestId("keyword-detail");
    await detail.getByText("banned by the site").or(detail.locator(".timeline li").first()).first().waitFor();
    expect(await detail.locator(".timeline li").allTextContents()).toEqual([
      expect.stringMatching(/CRAWLING\s*→\s*FAILED fail spider-b/),
      expect.stringMatching(/IDLE\s*→\s*CRAWLING claim spider-b/),
    ]);
    await shot(page, "03-keywords-filtered-detail");

    // The admin's Retry: FAILED → PARTIAL, live in the diagram.
    const before = await stats("boss");
    await detail.getByRole("button", { name: "Retry" }).click();
    await waitCounts(page, "boss", { ...before, FAILED: before.FAILED - 1, PARTIAL: before.PARTIAL + 1 });
  });

  it("an admin imports keywords and edits a source's settings through the UI; they appear live", async () => {
    const { page } = await open(s.tokens.admin);
    await waitCounts(page, "zhilian", await stats("zhilian"), 5_000);
    const form = page.locator("section.import");
    await form.getByLabel("Source").selectOption("zhilian");
    await form.getByLabel(/Cities/).fill("hangzhou\nnanjing, suzhou");
    await form.getByLabel("Jobs").fill("golang");
    await form.getByRole("button", { name: /Import 3 keywords/ }).click();
    await form.getByTestId("import-result").filter({ hasText: "3 created" }).waitFor({ timeout: 5_000 });
    await waitCounts(page, "zhilian", { IDLE: 3, CRAWLING: 0, COMPLETED: 0, FAILED: 0, PARTIAL: 0 });
    const k = await s.ok(`{ keywords(source: "zhilian") { totalCount edges { node { city job } } } }`);
    expect(k.keywords.totalCount).toBe(3);
    expect(k.keywords.edges.map((e: any) => `${e.node.city}/${e.node.job}`).sort()).toEqual(["hangzhou/golang", "nanjing/golang", "suzhou/golang"]);
    await shot(page, "04-admin-imported");

    // Source settings, through the UI.
    const card = page.locator('[data-source-card="zhilian"]');
    await card.getByRole("button", { name: "Edit settings" }).click();
    await card.getByLabel("maxRetries").fill("5");
    await card.getByLabel("stale after (s)").fill("600");
    await card.getByRole("button", { name: "Save" }).click();
    await card.getByText("maxRetries 5 · stale after 600s").waitFor({ timeout: 5_000 });
    const src = await s.ok(`{ sources { id maxPages maxRetries staleAfterSeconds enabled } }`);
    expect(src.sources.find((x: any) => x.id === "zhilian")).toEqual({ id: "zhilian", maxPages: 15, maxRetries: 5, staleAfterSeconds: 600, enabled: true });
  });

  it("a viewer sees the live dashboard but no action buttons", async () => {
    const { page } = await open(s.tokens.viewer);
    await page.getByTestId("role").filter({ hasText: "VIEWER" }).waitFor();
    for (const source of ["boss", "qcwy", "zhilian"]) await waitCounts(page, source, await stats(source), 5_000);
    await page.locator("section.keywords tbody tr").first().click();
    await page.getByTestId("keyword-detail").locator(".timeline").waitFor();
    const buttons = await page.locator("button").allTextContents();
    expect(buttons.filter((b) => /import|reset|release|retry|edit settings|save/i.test(b))).toEqual([]);
    expect(await page.locator("section.import").count()).toBe(0);
    expect(await page.getByTestId("keyword-actions").count()).toBe(0);
    await shot(page, "05-viewer");
    // A phone-sized screen: the same page, no horizontal scroll of the whole page.
    const phone = await open(s.tokens.viewer, { width: 390, height: 844 });
    await waitCounts(phone.page, "boss", await stats("boss"), 5_000);
    expect(await phone.page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await shot(phone.page, "06-phone");
  });
});

/** A port nobody listens on now, for a server that must come back on the same one. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

describe.skipIf(chromiumMissing)("dashboard across a server restart", () => {
  let browser: Browser;
  let server: ServerProcess | undefined;
  let drop: () => Promise<void> = async () => {};

  afterAll(async () => {
    await browser?.close();
    await server?.kill();
    await drop();
  });

  it("reconnects by itself after the server is killed and started again, and shows live data", async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const db = await createTestDatabase("sqlite");
    drop = db.drop;
    await migrate(db.url);
    const database = await openDatabase(db.url);
    await seedSources(database);
    const admin = (await createToken(database, Role.ADMIN, "e2e-admin")).token;
    await database.close();
    // A real clock: a time zone where it is midday, so the crawl day cannot turn during the test.
    const env = { DATABASE_URL: db.url, PORT: String(await freePort()), DISTRIBUTION_THROTTLE_MS: "50", CRAWL_TZ: middayTimeZone() };
    server = await spawnServer(env);
    const gql = async (query: string, variables: Record<string, unknown> = {}) => {
      const res = await fetch(server!.url, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${admin}` },
        body: JSON.stringify({ query, variables }),
      });
      const body = (await res.json()) as { data?: any; errors?: unknown[] };
      if (body.errors) throw new Error(JSON.stringify(body.errors));
      return body.data;
    };
    await gql(`mutation { importKeywords(source: "boss", cities: ["x", "y"], jobs: ["z"]) { created } }`);

    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`http://127.0.0.1:${server.port}/`);
    await waitStatus(page, ["live"], 15_000);
    await waitCounts(page, "boss", { IDLE: 2, CRAWLING: 0, COMPLETED: 0, FAILED: 0, PARTIAL: 0 }, 5_000);

    await server.kill("SIGKILL");
    await waitStatus(page, ["reconnecting", "offline"], 15_000);
    await shot(page, "07-server-down");

    server = await spawnServer(env);
    await waitStatus(page, ["live"], 20_000);
    // Live data again: a claim made after the restart reaches the diagram within 2 s.
    await gql(`mutation { claimKeywords(source: "boss", crawlerId: "after-restart", limit: 1) { leaseToken } }`);
    await waitCounts(page, "boss", { IDLE: 1, CRAWLING: 1, COMPLETED: 0, FAILED: 0, PARTIAL: 0 });
    await page.getByTestId("fleet-table").locator('[data-crawler="after-restart"]').waitFor({ timeout: 5_000 });
    await shot(page, "08-server-back");
  });
});
