// The job-board simulator: one HTTP server with each site's search API under its own prefix
// (/boss, /qcwy, /zhilian), deterministic data from a seed, injectable faults per site, a request
// log and a reset for tests. Other simulators plug in as extra mounts (a path prefix + handler).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Socket } from "node:net";
import { BOARDS } from "./boards.ts";
import { SITES, type SiteId, truth } from "./data.ts";
import { draw, type Faults, NO_FAULTS, type Outcome, parseFaults } from "./faults.ts";

export type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void | Promise<void>;

export interface Mount {
  /** e.g. "/upstream": requests whose path starts with it go to `handler`. */
  prefix: string;
  handler: Handler;
}

export interface SimOptions {
  /** Data seed: the same seed serves the same postings. */
  seed?: string;
  /** Faults per site at start (default: from SIM_FAULTS_<SITE>). */
  faults?: Partial<Record<SiteId, Partial<Faults>>>;
  /** Extra route handlers by path prefix. */
  mounts?: Mount[];
  /** How long a "timeout" fault holds a request before giving up on it (ms). */
  holdMs?: number;
}

export interface LoggedRequest {
  seq: number;
  site: SiteId;
  city: string;
  q: string;
  page: number;
  outcome: Outcome;
  at: string;
}

export interface Sim {
  readonly seed: string;
  readonly server: Server;
  start(port?: number, host?: string): Promise<number>;
  stop(): Promise<void>;
  url(path?: string): string;
  setFaults(site: SiteId, faults: Partial<Faults>): void;
  requests(): LoggedRequest[];
  reset(): void;
}

/** A small seeded PRNG (mulberry32) so a run's fault draws can be replayed. */
function prng(seed: string) {
  let a = [...seed].reduce((h, c) => Math.imul(h ^ c.charCodeAt(0), 16777619), 2166136261) >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function envFaults(): Partial<Record<SiteId, Faults>> {
  const out: Partial<Record<SiteId, Faults>> = {};
  for (const site of SITES) {
    const name = `SIM_FAULTS_${site.toUpperCase()}`;
    const text = process.env[name];
    try {
      if (text) out[site] = parseFaults(text);
    } catch (e) {
      throw new Error(`${name}=${JSON.stringify(text)}: ${(e as Error).message}`);
    }
  }
  return out;
}

const json = (res: ServerResponse, status: number, body: unknown) =>
  res.writeHead(status, { "content-type": "application/json; charset=utf-8" }).end(JSON.stringify(body));

export function createSimServer(options: SimOptions = {}): Sim {
  const seed = options.seed ?? process.env.SIM_SEED ?? "sim";
  const holdMs = options.holdMs ?? 120_000;
  const initial = { ...envFaults(), ...options.faults };
  const faults = new Map<SiteId, Faults>();
  const log: LoggedRequest[] = [];
  const held = new Set<ServerResponse>();
  const sockets = new Set<Socket>();
  let random = prng(seed);

  function reset() {
    log.length = 0;
    random = prng(seed);
    for (const site of SITES) faults.set(site, { ...NO_FAULTS, ...initial[site] });
  }
  reset();

  async function serveBoard(site: SiteId, req: IncomingMessage, res: ServerResponse, url: URL, body: string) {
    const board = BOARDS[site];
    const search = req.method === board.method ? board.search(url, body) : null;
    if (!search) return json(res, 404, { error: `${board.method} ${board.path} expected` });
    const f = faults.get(site)!;
    const outcome = draw(f, random);
    log.push({ seq: log.length + 1, site, city: search.city, q: search.q, page: search.page, outcome, at: new Date().toISOString() });
    if (f.latency) await new Promise((r) => setTimeout(r, f.latency));
    switch (outcome) {
      case "error":
        return json(res, 503, { error: "simulated 503" });
      case "timeout": {
        held.add(res);
        const t = setTimeout(() => {
          held.delete(res);
          if (!res.writableEnded) json(res, 504, { error: "simulated timeout" });
        }, holdMs);
        res.on("close", () => {
          clearTimeout(t);
          held.delete(res);
        });
        return;
      }
      case "ban": {
        const [status, type, text] = board.ban;
        return res.writeHead(status, { "content-type": type }).end(text);
      }
      case "truncate": {
        const text = JSON.stringify(board.ok(seed, search));
        return res.writeHead(200, { "content-type": "application/json; charset=utf-8" }).end(text.slice(0, Math.floor(text.length / 2)));
      }
      default:
        return json(res, 200, board.ok(seed, search));
    }
  }

  function control(req: IncomingMessage, res: ServerResponse, url: URL) {
    const path = url.pathname;
    const site = url.searchParams.get("site") as SiteId | null;
    if (site && !SITES.includes(site)) return json(res, 400, { error: `unknown site "${site}"` });
    if (path === "/_sim/requests") return json(res, 200, site ? log.filter((r) => r.site === site) : log);
    if (path === "/_sim/reset" && req.method === "POST") {
      reset();
      return json(res, 200, { ok: true });
    }
    if (path === "/_sim/faults") {
      if (req.method === "POST") {
        if (!site) return json(res, 400, { error: "site= is required" });
        const params = Object.fromEntries([...url.searchParams].filter(([k]) => k !== "site"));
        try {
          sim.setFaults(site, parseFaults(params));
        } catch (e) {
          return json(res, 400, { error: (e as Error).message });
        }
      }
      return json(res, 200, Object.fromEntries(faults));
    }
    if (path === "/_sim/truth") {
      // ?site=&city=&q=&maxPages=: what a perfect crawl of that search finds.
      const p = url.searchParams;
      if (!site) return json(res, 400, { error: "site= is required" });
      return json(res, 200, truth(seed, site, p.get("city") ?? "", p.get("q") ?? "", Number(p.get("maxPages") ?? 1000)));
    }
    return json(res, 404, { error: "unknown control path" });
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? "/", "http://sim");
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    const mount = options.mounts?.find((m) => url.pathname === m.prefix || url.pathname.startsWith(`${m.prefix}/`));
    if (mount) return mount.handler(req, res, body);
    if (url.pathname.startsWith("/_sim/")) return control(req, res, url);
    if (url.pathname === "/healthz") return json(res, 200, { ok: true, seed });
    for (const site of SITES) {
      if (url.pathname === `/${site}${BOARDS[site].path}`) return serveBoard(site, req, res, url, body);
    }
    return json(res, 404, { error: "not found" });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((e) => {
      if (!res.headersSent) json(res, 500, { error: String(e) });
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });

  const sim: Sim = {
    seed,
    server,
    start: (port = 0, host = "127.0.0.1") =>
      new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
      }),
    stop: () =>
      new Promise((resolve) => {
        for (const r of held) r.destroy();
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
    url: (path = "") => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
    setFaults: (site, f) => faults.set(site, { ...NO_FAULTS, ...f }),
    requests: () => [...log],
    reset,
  };
  return sim;
}
