// End-to-end fixtures: the real server (in process, real clock), the job-board simulator, and
// spider processes spawned as `npm run spider` runs them, so tests can SIGKILL / SIGTERM them.
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { expect } from "vitest";
import { middayTimeZone, startServer, type TestServer } from "../../server/test/harness.ts";
import { createSimServer, type LoggedRequest, type Sim } from "../sim/server.ts";
import { truth, type SiteId } from "../sim/data.ts";
import { cityCode, SITE_ADAPTERS } from "../src/sites/index.ts";

const root = new URL("../..", import.meta.url).pathname;

/** Fast settings for tests: short backoff and timeouts, no politeness delay. */
export const FAST_ENV = {
  SITE_RATE_PER_SEC: "1000",
  RETRY_MIN_MS: "20",
  RETRY_MAX_MS: "200",
  SITE_TIMEOUT_MS: "400",
  SITE_RETRIES: "8",
  SERVER_TIMEOUT_MS: "2000",
  SERVER_RETRY_MS: "60000",
  SPIDER_POLL_MS: "100",
  LOG_LEVEL: "info",
};

export interface Fleet {
  server: TestServer;
  sim: Sim;
  close(): Promise<void>;
}

export async function startFleet(provider: "sqlite" | "postgres" = "sqlite", seed = "e2e"): Promise<Fleet> {
  const server = await startServer(provider, { realClock: true, config: { CRAWL_TZ: middayTimeZone() } });
  const sim = createSimServer({ seed, holdMs: 5_000 });
  await sim.start(0);
  return {
    server,
    sim,
    async close() {
      await sim.stop();
      await server.close();
    },
  };
}

export interface SpiderProcess {
  child: ChildProcess;
  /** Parsed JSON log lines so far. */
  lines: Record<string, any>[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves when a log line matches. */
  waitFor(pred: (line: Record<string, any>) => boolean, timeoutMs?: number): Promise<Record<string, any>>;
  kill(signal: NodeJS.Signals): void;
}

export function spawnSpider(site: SiteId, fleet: { apiUrl: string; token: string; simUrl: string }, args: string[] = [], env: Record<string, string> = {}): SpiderProcess {
  const child = spawn(join(root, "node_modules/.bin/tsx"), [join(root, "spiders/src/cli.ts"), site, ...args], {
    cwd: root,
    env: { ...process.env, ...FAST_ENV, CRAWL_API_URL: fleet.apiUrl, CRAWL_TOKEN: fleet.token, SITE_BASE_URL: fleet.simUrl, ...env },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: Record<string, any>[] = [];
  const waiters: { pred: (l: Record<string, any>) => boolean; resolve: (l: Record<string, any>) => void }[] = [];
  let buf = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => {
    buf += d.toString();
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const text = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      let line: Record<string, any>;
      try {
        line = JSON.parse(text);
      } catch {
        continue;
      }
      lines.push(line);
      for (const w of [...waiters]) if (w.pred(line)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  });
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    lines,
    exited,
    waitFor(pred, timeoutMs = 60_000) {
      const seen = lines.find(pred);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`spider ${site}: no matching log line in ${timeoutMs} ms; stderr:\n${stderr}`)), timeoutMs);
        waiters.push({ pred, resolve: (l) => (clearTimeout(t), resolve(l)) });
        void exited.then(() => setTimeout(() => reject(new Error(`spider ${site} exited before the log line; stderr:\n${stderr}`)), 100));
      });
    },
    kill(signal) {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, signal);
    },
  };
}

/** The city as the site's request carries it (what the simulator keys its data by). */
export const cityParam = cityCode;

/** What a perfect crawl of a keyword finds, given the source's maxPages. */
export function expected(sim: Sim, site: SiteId, city: string, job: string, maxPages: number) {
  return truth(sim.seed, site, cityParam(site, city), job, maxPages, SITE_ADAPTERS[site].pageSize);
}

/** Fetches of each page of a keyword in the simulator's request log: "page" → count. */
export function fetchesOf(log: LoggedRequest[], site: SiteId, city: string, job: string): Map<number, number> {
  const m = new Map<number, number>();
  const c = cityParam(site, city);
  for (const r of log) if (r.site === site && r.city === c && r.q === job) m.set(r.page, (m.get(r.page) ?? 0) + 1);
  return m;
}

/** Every keyword of a source, straight from the database. */
export function keywordsOf(server: TestServer, source: string) {
  return server.app.services.database.reader.keyword.findMany({ where: { sourceId: source }, orderBy: { id: "asc" } });
}

/** Postings counted for a keyword today: its sightings on the pages it reported. */
export async function sightingsOf(server: TestServer, keywordId: number) {
  return server.app.services.database.reader.postingSighting.count({ where: { keywordId } });
}

/** Assert a finished keyword matches the simulator's truth: jobsFound, postings, no page lost. */
export async function expectExact(fleet: Fleet, site: SiteId, kw: { id: number; city: string; job: string; jobsFound: number; status: string }, maxPages: number) {
  const t = expected(fleet.sim, site, kw.city, kw.job, maxPages);
  expect(kw.status, `${site} ${kw.city}/${kw.job}`).toBe("COMPLETED");
  expect(kw.jobsFound, `${site} ${kw.city}/${kw.job} jobsFound`).toBe(t.jobs);
  expect(await sightingsOf(fleet.server, kw.id)).toBe(t.jobs);
  const fetched = fetchesOf(fleet.sim.requests(), site, kw.city, kw.job);
  const pages = Math.max(t.pages, 1);
  for (let p = 1; p <= pages; p++) expect(fetched.get(p) ?? 0, `${site} ${kw.city}/${kw.job} page ${p} fetched`).toBeGreaterThanOrEqual(1);
  expect([...fetched.keys()].every((p) => p <= pages), `${site} ${kw.city}/${kw.job}: no page past the last`).toBe(true);
  return { t, fetched };
}
