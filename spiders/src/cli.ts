// `npm run spider -- <boss|qcwy|zhilian> [--concurrency N] [--once]`: one spider process.
// Settings from the environment (and .env): CRAWL_API_URL, CRAWL_TOKEN, SITE_BASE_URL, … (README).
import { existsSync } from "node:fs";
import { hostname } from "node:os";
import { Writable } from "node:stream";
import { Command, InvalidArgumentError } from "commander";
import { pino } from "pino";
import { parseSpiderConfig, siteBaseUrl, type SpiderConfig } from "./config.ts";
import { SourcesDocument } from "./gql/graphql.ts";
import { SITE_ADAPTERS, SITE_IDS } from "./sites/index.ts";
import type { SiteId } from "./sites/site.ts";
import { TtyProgress } from "./runtime/progress.ts";
import { ServerClient } from "./runtime/server-client.ts";
import { SiteFetcher } from "./runtime/site-fetcher.ts";
import { Spider } from "./runtime/spider.ts";

const positiveInt = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 100) throw new InvalidArgumentError("must be an integer from 1 to 100");
  return n;
};

const program = new Command()
  .name("spider")
  .description("Crawl one job site's keywords for the control plane")
  .argument("<site>", `the site: ${SITE_IDS.join(", ")}`, (v) => {
    if (!SITE_IDS.includes(v as SiteId)) throw new InvalidArgumentError(`must be one of ${SITE_IDS.join(", ")}`);
    return v as SiteId;
  })
  .option("-c, --concurrency <n>", "keywords in flight at once (default: SPIDER_CONCURRENCY, 2)", positiveInt)
  .option("--once", "exit 0 when nothing is left to claim (default: poll until stopped)", false)
  .option("--crawler-id <id>", "how this spider names itself to the server (default: <site>-<host>-<pid>)")
  .action(async (site: SiteId, opts: { concurrency?: number; once: boolean; crawlerId?: string }) => {
    if (existsSync(".env")) process.loadEnvFile(".env");
    let config: SpiderConfig;
    try {
      config = parseSpiderConfig();
    } catch (e) {
      console.error((e as Error).message);
      process.exit(2);
    }
    await runSpider(site, config, opts);
  });

async function runSpider(site: SiteId, config: SpiderConfig, opts: { concurrency?: number; once: boolean; crawlerId?: string }) {
  const tty = Boolean(process.stdout.isTTY) && config.LOG_LEVEL !== "silent";
  let progress: TtyProgress | undefined;
  // On a terminal, warnings and errors print above the progress bars; elsewhere, JSON lines.
  const log = tty
    ? pino({ level: "warn" }, new Writable({ write: (chunk, _e, done) => (printAbove(String(chunk)), done()) }))
    : pino({ level: config.LOG_LEVEL, base: { site, pid: process.pid } });
  /** A JSON log line as `WARN message key=value …` above the progress bars. */
  function printAbove(line: string) {
    const { level, time: _t, pid: _p, hostname: _h, msg, ...rest } = JSON.parse(line) as Record<string, unknown>;
    const name = (pino.levels.labels[Number(level)] ?? "log").toUpperCase();
    const text = `${name} ${msg} ${Object.entries(rest).map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`).join(" ")}`;
    if (progress) progress.log(text);
    else process.stderr.write(`${text}\n`);
  }
  const crawlerId = (opts.crawlerId ?? `${site}-${hostname()}-${process.pid}`).replace(/[^\x21-\x7e]/g, "_").slice(0, 64);
  const backoff = { minMs: config.RETRY_MIN_MS, maxMs: config.RETRY_MAX_MS };
  const client = new ServerClient({
    url: config.CRAWL_API_URL,
    token: config.CRAWL_TOKEN,
    timeoutMs: config.SERVER_TIMEOUT_MS,
    retryForMs: config.SERVER_RETRY_MS,
    ...backoff,
    onRetry: (operation, e, attempt) => log.warn({ operation, attempt, err: e.message }, "server call failed, retrying"),
  });
  const fetcher = new SiteFetcher({
    adapter: SITE_ADAPTERS[site],
    baseUrl: siteBaseUrl(config, site),
    ratePerSec: config.SITE_RATE_PER_SEC,
    timeoutMs: config.SITE_TIMEOUT_MS,
    retries: config.SITE_RETRIES,
    ...backoff,
    onRetry: (kw, page, e, attempt) => log.warn({ keyword: `${kw.city}/${kw.job}`, page, attempt, err: e.message }, "site request failed, retrying"),
  });
  let source;
  try {
    source = (await client.request(SourcesDocument, {})).sources.find((s) => s.id === site);
  } catch (e) {
    // A bad token or an unreachable server at start is a configuration problem: say so and stop.
    console.error(`cannot start: ${(e as Error).message}`);
    process.exit(2);
  }
  if (!source) {
    console.error(`cannot start: the server has no source "${site}"`);
    process.exit(2);
  }
  const spider = new Spider({
    site,
    crawlerId,
    client,
    fetcher,
    concurrency: opts.concurrency ?? config.SPIDER_CONCURRENCY,
    once: opts.once,
    pollMs: config.SPIDER_POLL_MS,
    maxPages: source.maxPages,
    // Three heartbeats per staleAfterSeconds while a page is slow.
    heartbeatMs: Math.max(200, Math.floor((source.staleAfterSeconds * 1000) / 3)),
    log,
    onEvent: (e) => progress?.onEvent(e),
  });
  if (tty) progress = new TtyProgress(site, spider.totals, source.maxPages);
  let signals = 0;
  for (const sig of ["SIGINT", "SIGTERM"] as const) {
    process.on(sig, () => {
      // A second signal means "now": the leases then lapse to the stale sweep.
      if (++signals > 1) process.exit(130);
      log.info({ signal: sig }, "stopping: releasing keywords in flight");
      spider.stop();
    });
  }
  log.info({ crawlerId, concurrency: opts.concurrency ?? config.SPIDER_CONCURRENCY, once: opts.once, site: siteBaseUrl(config, site) }, "spider started");
  const totals = await spider.run();
  progress?.stop();
  const cpu = process.cpuUsage();
  log.info({ ...totals, cpuMs: Math.round((cpu.user + cpu.system) / 1000) }, "spider stopped");
  if (tty) console.log(`${site}: ${totals.pages} pages, ${totals.jobs} jobs, ${totals.completed} completed, ${totals.failed} failed`);
  // --once ends with 1 when it could not ask the server for work, not because none was left.
  process.exit(opts.once && spider.claimFailed ? 1 : 0);
}

await program.parseAsync();
