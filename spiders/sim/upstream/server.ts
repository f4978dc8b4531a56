// The upstream simulator: an HTTP JSON API in the shape the incremental collector pulls
// (`GET <prefix>?offset=O&limit=L` → `{ "data": { "total": N, "data": [record, …] } }`, oldest
// first), over a Dataset that grows over time, with faults that tests and operators control.
// `createUpstreamHandler` mounts it under a path prefix of any Node http server;
// `startUpstreamSim` runs it on its own port (what the tests use).
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Dataset, type DatasetOptions, prng } from "./dataset.ts";

export interface UpstreamFaults {
  /** Share of data requests answered 503 (seeded, so a run is repeatable). @default 0 */
  errorRate?: number;
  /** Delay before every data answer, ms. @default 0 */
  latencyMs?: number;
  /** Offsets [from, to) whose requests always fail with 500: a batch that never succeeds. */
  failRange?: [number, number] | null;
}

export interface UpstreamSimOptions extends DatasetOptions {
  faults?: UpstreamFaults;
  /** Append `growBy` records every `growEveryMs` (0 = only on request). @default 0 */
  growEveryMs?: number;
  /** @default 10 */
  growBy?: number;
  /** Largest `limit` accepted. @default 1000 */
  maxLimit?: number;
}

/** The simulator's state: the dataset, the faults in force, and what was asked of it. */
export class UpstreamSim {
  readonly dataset: Dataset;
  faults: Required<UpstreamFaults>;
  readonly maxLimit: number;
  /** Data requests received, and per requested offset. */
  requests = 0;
  readonly requestsAt = new Map<number, number>();
  /**
   * Called with every data request before it is answered (tests change the faults from here); a
   * promise it returns holds the answer until it settles (a test pausing a run at a chosen batch).
   */
  onRequest?: (offset: number, limit: number) => void | Promise<void>;
  private readonly random: () => number;
  private grower?: NodeJS.Timeout;

  constructor(o: UpstreamSimOptions = {}) {
    this.dataset = new Dataset(o);
    this.faults = { errorRate: 0, latencyMs: 0, failRange: null };
    this.setFaults(o.faults ?? {});
    this.maxLimit = o.maxLimit ?? 1000;
    this.random = prng(this.dataset.seed ^ 0x2545f491);
    if (o.growEveryMs) this.grower = setInterval(() => this.dataset.append(o.growBy ?? 10, today()), o.growEveryMs).unref();
  }

  setFaults(f: UpstreamFaults): void {
    this.faults = { ...this.faults, ...f };
  }

  get total(): number {
    return this.dataset.total;
  }

  /** Append n records published on `day` (default: the dataset's newest day). */
  append(n: number, day?: string): number {
    return this.dataset.append(n, day);
  }

  close(): void {
    clearInterval(this.grower);
  }

  /** Answer one data request: [status, body]. */
  async answer(offset: number, limit: number): Promise<[number, unknown]> {
    this.requests++;
    this.requestsAt.set(offset, (this.requestsAt.get(offset) ?? 0) + 1);
    await this.onRequest?.(offset, limit);
    // unref: a long delay (a test holding the upstream) never keeps a process alive by itself.
    if (this.faults.latencyMs > 0) await new Promise((r) => setTimeout(r, this.faults.latencyMs).unref());
    const fr = this.faults.failRange;
    if (fr && limit > 0 && offset < fr[1] && offset + limit > fr[0]) {
      return [500, { error: `permanent failure for offsets ${fr[0]}-${fr[1] - 1}` }];
    }
    if (this.faults.errorRate > 0 && this.random() < this.faults.errorRate) return [503, { error: "temporarily unavailable" }];
    return [200, { data: { total: this.total, data: this.dataset.slice(offset, limit) } }];
  }
}

const today = () => new Date().toISOString().slice(0, 10);

function send(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8" }).end(JSON.stringify(body));
}

async function readJson(req: IncomingMessage, body?: string): Promise<unknown> {
  let text = body ?? "";
  if (body === undefined) for await (const chunk of req) text += chunk;
  return text ? JSON.parse(text) : {};
}

const intParam = (v: string | null, min: number, max: number) => {
  const n = v === null || v === "" ? NaN : Number(v);
  return Number.isInteger(n) && n >= min && n <= max ? n : null;
};

/**
 * A request handler for `prefix` (e.g. `/upstream`): returns false for paths outside it, so it can
 * sit in front of another handler.
 * - `GET <prefix>?offset&limit`: the data.
 * - `GET <prefix>/_state`: total, faults, request count.
 * - `POST <prefix>/_append?n=500[&day=YYYY-MM-DD]`: grow the dataset.
 * - `POST <prefix>/_faults` with a JSON body of UpstreamFaults: change the faults.
 */
export function createUpstreamHandler(sim: UpstreamSim, prefix = "/upstream") {
  const base = prefix.replace(/\/+$/, "");
  // `body`: the request body when the caller has read it already (the job-board simulator's mounts).
  return (req: IncomingMessage, res: ServerResponse, body?: string): boolean => {
    const url = new URL(req.url ?? "/", "http://sim");
    const path = url.pathname.replace(/\/+$/, "");
    if (path !== base && !path.startsWith(`${base}/`)) return false;
    const action = path.slice(base.length);
    void (async () => {
      if (action === "" && req.method === "GET") {
        const offset = intParam(url.searchParams.get("offset"), 0, Number.MAX_SAFE_INTEGER);
        const limit = intParam(url.searchParams.get("limit"), 0, sim.maxLimit);
        if (offset === null || limit === null) return send(res, 400, { error: `offset must be ≥ 0 and limit 0–${sim.maxLimit}` });
        const [status, body] = await sim.answer(offset, limit);
        return send(res, status, body);
      }
      if (action === "/_state" && req.method === "GET") {
        return send(res, 200, { total: sim.total, faults: sim.faults, requests: sim.requests });
      }
      if (action === "/_append" && req.method === "POST") {
        const n = intParam(url.searchParams.get("n"), 1, 1_000_000);
        const day = url.searchParams.get("day") ?? undefined;
        if (n === null || (day !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(day))) return send(res, 400, { error: "n must be 1–1000000, day YYYY-MM-DD" });
        return send(res, 200, { total: sim.append(n, day) });
      }
      if (action === "/_faults" && req.method === "POST") {
        sim.setFaults((await readJson(req, body)) as UpstreamFaults);
        return send(res, 200, { faults: sim.faults });
      }
      send(res, 404, { error: "not found" });
    })().catch((err: Error) => send(res, 400, { error: err.message }));
    return true;
  };
}

export interface RunningUpstreamSim {
  sim: UpstreamSim;
  /** The data URL (what a collector task's `url` is). */
  url: string;
  close(): Promise<void>;
}

/** The simulator on its own port (0 = any free one) on 127.0.0.1. */
export async function startUpstreamSim(o: UpstreamSimOptions & { port?: number; prefix?: string } = {}): Promise<RunningUpstreamSim> {
  const sim = new UpstreamSim(o);
  const prefix = o.prefix ?? "/upstream";
  const handle = createUpstreamHandler(sim, prefix);
  const server = createServer((req, res) => {
    if (!handle(req, res)) send(res, 404, { error: "not found" });
  });
  await new Promise<void>((resolve) => server.listen(o.port ?? 0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    sim,
    url: `http://127.0.0.1:${port}${prefix}`,
    async close() {
      sim.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
