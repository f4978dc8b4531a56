// What the browser tests share: Debian's Chromium (driven by playwright-core, never a downloaded
// browser), the screenshots folder, opening the dashboard as a token's holder, and waiting for the
// connection badge.
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const CHROMIUM_ARGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];
export const ARTIFACTS = join(import.meta.dirname, "../../test-artifacts/e2e");

/** true (with a warning) when Chromium is not installed; under CI=true that is an error instead. */
export function chromiumIsMissing(): boolean {
  if (existsSync(CHROMIUM)) return false;
  const why = `${CHROMIUM} not found (install Debian's chromium: apt-get install -y chromium)`;
  if (process.env.CI === "true") throw new Error(`CI=true but the browser test cannot run: ${why}`);
  console.warn(`[skip] browser end-to-end test skipped: ${why}`);
  return true;
}

export const waitStatus = (page: Page, statuses: string[], timeout: number) =>
  page.waitForFunction((want) => want.includes(document.querySelector('[data-testid="connection"]')?.getAttribute("data-status") ?? ""), statuses, {
    timeout,
    polling: 50,
  });

export async function shot(page: Page, name: string) {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/**
 * A new browser context (kept in `contexts` for closing) with `token` signed in, at `url`, once the
 * live connection is up. Page errors are collected in `errors`.
 */
export async function openDashboard(
  browser: Browser,
  contexts: BrowserContext[],
  url: string,
  token: string | null,
  viewport = { width: 1280, height: 900 },
) {
  const context = await browser.newContext({ viewport });
  contexts.push(context);
  if (token) await context.addInitScript((t) => localStorage.setItem("ccp.token", t), token);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(url);
  await waitStatus(page, ["live"], 15_000);
  return { page, errors };
}
