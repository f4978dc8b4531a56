// The collector panel in a real browser against the real server and the upstream simulator: an
// admin creates a task through the UI, starts it, watches it live (held mid-run at a chosen batch,
// stopped, started again) until COMPLETED with the produced count the API gives; a viewer sees the
// same panel without a button. Screenshots go to test-artifacts/e2e/.
import { mkdirSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, type BrowserContext, chromium, type Locator } from "playwright-core";
import { startUpstreamSim, type RunningUpstreamSim } from "../../spiders/sim/upstream/server.ts";
import { freshKeys, TASK, TODAY } from "../../server/test/collector-fixtures.ts";
import { startServer, type TestServer } from "../../server/test/harness.ts";
import { ensureBuild } from "../build.ts";
import { ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, chromiumIsMissing, openDashboard, shot } from "./browser.ts";

const RECORDS = 2_000;
const BATCH = 100;
const FILTER_DAYS = 7;
/** How long the page may take to show what the API already says (subscription + render). */
const LIVE_MS = 5_000;

const chromiumMissing = chromiumIsMissing();

beforeAll(() => ensureBuild((line) => console.log(line)), 120_000);

/** The text of a card's field (data-testid), once it equals `want`. */
async function waitText(card: Locator, testId: string, want: string, timeout = LIVE_MS) {
  const el = card.getByTestId(testId);
  try {
    await el.filter({ hasText: new RegExp(`^${want.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`) }).waitFor({ timeout });
  } catch {
    throw new Error(`${testId}: wanted "${want}" within ${timeout} ms, the page shows "${await el.textContent().catch(() => null)}"`);
  }
}

const fmt = (n: number) => n.toLocaleString("en-US");

describe.skipIf(chromiumMissing)("collector panel in Chromium", () => {
  let browser: Browser;
  let s: TestServer;
  let u: RunningUpstreamSim;
  const contexts: BrowserContext[] = [];
  let taskId = "";

  const open = (token: string, viewport?: { width: number; height: number }) => openDashboard(browser, contexts, s.app.url("/"), token, viewport);
  const apiTask = async () => (await s.ok(TASK, { id: taskId })).collectorTask;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    s = await startServer("sqlite");
    u = await startUpstreamSim({ initial: RECORDS, endDay: TODAY, spanDays: 60, seed: 5 });
  }, 120_000);

  afterAll(async () => {
    for (const c of contexts) await c.close();
    await browser?.close();
    await s?.close();
    await u?.close();
  });

  it("an admin creates a task through the UI, starts it and sees it run live to COMPLETED with the API's counts", async () => {
    const { page, errors } = await open(s.tokens.admin);
    const panel = page.locator("section.collector");
    await panel.getByText("No collector task yet.").waitFor();
    const navigations: string[] = [];
    page.on("framenavigated", (f) => navigations.push(f.url()));

    // Create, through the form.
    await panel.getByText("New collector task").click();
    const form = panel.getByRole("form", { name: "New collector task" });
    await form.getByLabel("Name").fill("ui-feed");
    await form.getByLabel("Upstream URL").fill(u.url);
    await form.getByLabel("Batch size").fill(String(BATCH));
    await form.getByLabel("Fresh within (days)").fill(String(FILTER_DAYS));
    await form.getByLabel("Max expired batches").fill("3");
    await form.getByRole("button", { name: "Create task" }).click();
    await form.getByTestId("collector-created").filter({ hasText: "created ui-feed" }).waitFor({ timeout: LIVE_MS });
    const card = panel.locator("[data-collector-task]");
    await card.waitFor({ timeout: LIVE_MS });
    taskId = (await card.getAttribute("data-collector-task"))!;
    expect(await apiTask()).toMatchObject({ name: "ui-feed", url: u.url, sink: "DATABASE", batchSize: BATCH, filterDays: FILTER_DAYS, maxExpiredBatches: 3 });
    await waitText(card, "collector-status", "IDLE");
    await shot(page, "09-collector-created");

    // Start, with the upstream holding the third batch (newest first): the page must show the
    // run half-way, with the counts the API has then.
    const top = u.sim.total;
    const held = top - 3 * BATCH;
    let release = () => {};
    const gate = new Promise<void>((r) => (release = r));
    u.sim.onRequest = (offset, limit) => (limit > 0 && offset === held ? gate : undefined);
    const actions = card.getByTestId("collector-actions");
    await actions.getByRole("button", { name: "Start" }).click();
    await waitText(card, "collector-status", "RUNNING");
    let api = await apiTask();
    for (let i = 0; api.progress.coveredCount < 2 * BATCH; i++) {
      if (i > 500) throw new Error(`the run did not reach the held batch: ${JSON.stringify(api.progress)}`);
      await new Promise((r) => setTimeout(r, 20));
      api = await apiTask();
    }
    expect(api.progress).toMatchObject({ status: "RUNNING", coveredCount: 2 * BATCH, total: top });
    expect(api.progress.producedCount).toBeGreaterThan(0);
    await waitText(card, "collector-coverage", `${fmt(2 * BATCH)}/${fmt(top)} offsets covered (${Math.floor((200 / top) * 100)}%)`);
    await waitText(card, "collector-produced", fmt(api.progress.producedCount));
    await waitText(card, "collector-filtered", fmt(api.progress.filteredCount));
    expect(await actions.getByRole("button", { name: "Start" }).isDisabled()).toBe(true);
    // The run going on heads the recent runs with its live counts.
    const current = card.locator(`[data-run="${api.progress.run.id}"]`);
    await current.filter({ hasText: "RUNNING" }).waitFor({ timeout: LIVE_MS });
    await waitText(current, "run-produced", fmt(api.progress.run.producedCount));
    await shot(page, "10-collector-running");

    // Stop mid-run (the held request is interrupted), then start again without the hold.
    await actions.getByRole("button", { name: "Stop" }).click();
    await waitText(card, "collector-status", "STOPPED");
    expect((await apiTask()).progress).toMatchObject({ status: "STOPPED", coveredCount: 2 * BATCH });
    u.sim.onRequest = undefined;
    release();
    await actions.getByRole("button", { name: "Start" }).click();
    await waitText(card, "collector-status", "COMPLETED", 30_000);

    api = await apiTask();
    const expected = freshKeys(u.sim, FILTER_DAYS);
    expect(api.progress).toMatchObject({ status: "COMPLETED", producedCount: expected.size, filteredCount: expected.size, coveredCount: top });
    await waitText(card, "collector-produced", fmt(api.progress.producedCount));
    await waitText(card, "collector-filtered", fmt(api.progress.filteredCount));
    await waitText(card, "collector-coverage", `${fmt(top)}/${fmt(top)} offsets covered (100%)`);
    await waitText(card, "collector-lag-head", `up to date (head ${fmt(top)})`, 10_000);
    await waitText(card, "collector-lag-sink", `${fmt(expected.size)} stored`, 10_000);
    // Recent runs, newest first, with their own counts.
    const runs = card.getByTestId("collector-runs").locator("tbody tr");
    await runs.nth(1).waitFor({ timeout: LIVE_MS });
    const cells = await runs.evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent)));
    expect(cells.map((c) => [c[0], c[2], c[3], c[7]])).toEqual(
      api.runs.map((r: { id: string; trigger: string; status: string; producedCount: number }) => [r.id, r.trigger, r.status, fmt(r.producedCount)]),
    );
    expect(api.runs.map((r: { status: string }) => r.status)).toEqual(["COMPLETED", "STOPPED"]);
    expect(navigations).toEqual([]);
    expect(errors).toEqual([]);
    await shot(page, "11-collector-completed");
  });

  it("a viewer sees the collector panel's progress but no button and no form", async () => {
    const { page } = await open(s.tokens.viewer);
    await page.getByTestId("role").filter({ hasText: "VIEWER" }).waitFor();
    const panel = page.locator("section.collector");
    const card = panel.locator(`[data-collector-task="${taskId}"]`);
    await waitText(card, "collector-status", "COMPLETED");
    await waitText(card, "collector-produced", fmt((await apiTask()).progress.producedCount));
    expect(await panel.locator("button").count()).toBe(0);
    expect(await panel.getByTestId("collector-actions").count()).toBe(0);
    expect(await panel.getByText("New collector task").count()).toBe(0);
    expect((await page.locator("button").allTextContents()).filter((b) => /start|stop|reset|create/i.test(b))).toEqual([]);
    await shot(page, "12-collector-viewer");
    // On a phone: the card fits, the runs table scrolls inside it, never the whole page.
    const phone = await open(s.tokens.viewer, { width: 390, height: 844 });
    await waitText(phone.page.locator(`[data-collector-task="${taskId}"]`), "collector-status", "COMPLETED");
    expect(await phone.page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await phone.page.locator("section.collector").screenshot({ path: `${ARTIFACTS}/13-collector-phone.png` });
  });
});
