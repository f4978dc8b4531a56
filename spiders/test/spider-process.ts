// A spider as `npm run spider` runs it, in its own process group, so tests and benches can
// SIGKILL / SIGTERM it and read its JSON log lines.
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import type { SiteId } from "../sim/data.ts";

const root = new URL("../..", import.meta.url).pathname;
/** tsx's loader by path, so a spider may run from any working directory. */
export const TSX_LOADER = new URL("../../node_modules/tsx/dist/loader.mjs", import.meta.url).href;

/** Fast settings for tests: short backoff and timeouts, no politeness delay. */
export const FAST_ENV = {
  SITE_RATE_PER_SEC: "1000",
  RETRY_MIN_MS: "20",
  RETRY_MAX_MS: "200",
  // Generous: a timeout retry would fetch a page twice (tests that want timeouts set it lower).
  SITE_TIMEOUT_MS: "5000",
  SITE_RETRIES: "8",
  SERVER_TIMEOUT_MS: "10000",
  SERVER_RETRY_MS: "60000",
  SPIDER_POLL_MS: "100",
  LOG_LEVEL: "info",
};

export interface SpiderProcess {
  child: ChildProcess;
  /** Parsed JSON log lines so far. */
  lines: Record<string, any>[];
  /** Everything written to stderr so far. */
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves when a log line matches. */
  waitFor(pred: (line: Record<string, any>) => boolean, timeoutMs?: number): Promise<Record<string, any>>;
  kill(signal: NodeJS.Signals): void;
}

export function spawnSpider(site: SiteId, fleet: { apiUrl: string; token: string; simUrl: string }, args: string[] = [], env: Record<string, string> = {}): SpiderProcess {
  // `node --import tsx`, one process: the tsx CLI would sit in between and SIGKILL a child that does
  // not acknowledge a relayed SIGTERM within ~60 ms (easily missed under load).
  const child = spawn(process.execPath, ["--import", TSX_LOADER, join(root, "spiders/src/cli.ts"), site, ...args], {
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
    stderr: () => stderr,
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
