// The bench's load generator, in a process of its own: spiders are separate processes, so the
// server under test should not share its event loop (and CPU) with the clients that load it — the
// same holds for the peers, whose clients (pg-boss, BullMQ workers) load PostgreSQL / Redis, which
// run in their own processes too. `LoadGenerator` forks this file once and asks it to run named
// loads; each answers with operations done and the seconds they took, timed in the child.
import { fork, type ChildProcess } from "node:child_process";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { post } from "./post.ts";

export interface LoadResult {
  ops: number;
  seconds: number;
}

const CLAIM = `mutation($c: String!, $n: Int!) { claimKeywords(source: "qcwy", crawlerId: $c, limit: $n) { keyword { id } leaseToken } }`;
const REPORT = `mutation($i: ReportPageProgressInput!) { reportPageProgress(input: $i) { id } }`;
const COMPLETE = `mutation($i: ReportCrawlCompleteInput!) { reportCrawlComplete(input: $i) { id } }`;
const REPORTS = `mutation($i: [ReportPageProgressInput!]!) { reportPagesProgress(inputs: $i) { keywordId error { code } } }`;
const COMPLETES = `mutation($i: [ReportCrawlCompleteInput!]!) { reportCrawlsComplete(inputs: $i) { keywordId error { code } } }`;
// One request per cycle (the SDK's CompleteAndClaim / CompleteManyAndClaim): the completion, then the next claim.
const COMPLETE_AND_CLAIM = `mutation($i: ReportCrawlCompleteInput!, $c: String!, $n: Int!) {
  reportCrawlComplete(input: $i) { id } claimKeywords(source: "qcwy", crawlerId: $c, limit: $n) { keyword { id } leaseToken } }`;
const COMPLETES_AND_CLAIM = `mutation($i: [ReportCrawlCompleteInput!]!, $c: String!, $n: Int!) {
  reportCrawlsComplete(inputs: $i) { keywordId error { code } } claimKeywords(source: "qcwy", crawlerId: $c, limit: $n) { keyword { id } leaseToken } }`;

type Lease = { keyword: { id: string }; leaseToken: string };
const completion = (k: Lease) => ({ keywordId: k.keyword.id, leaseToken: k.leaseToken, status: "COMPLETED" });

export function noItemErrors(results: { error?: unknown }[]) {
  const bad = results.filter((r) => r.error);
  if (bad.length) throw new Error(`batch items refused: ${JSON.stringify(bad.slice(0, 3))}`);
}

export function progress(label: string, done: number, total: number) {
  if (!process.stderr.isTTY) return;
  const width = 30;
  const filled = Math.round((Math.min(done, total) / total) * width);
  process.stderr.write(`\r${label.slice(0, 44).padEnd(44)} [${"#".repeat(filled)}${".".repeat(width - filled)}] ${done}/${total}`);
  if (done >= total) process.stderr.write("\n");
}

/** `total` operations over `concurrency` workers. */
export async function times(label: string, total: number, concurrency: number, op: (i: number) => Promise<void>): Promise<LoadResult> {
  let next = 0;
  let done = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < total; i = next++) {
        await op(i);
        if (++done % 50 === 0 || done === total) progress(label, done, total);
      }
    }),
  );
  return { ops: total, seconds: (performance.now() - t0) / 1000 };
}

/** Workers each run `loop` to its end; the sum of what they return per second. */
async function workers(concurrency: number, loop: (w: number) => Promise<number>): Promise<LoadResult> {
  const t0 = performance.now();
  const counts = await Promise.all(Array.from({ length: concurrency }, (_, w) => loop(w)));
  return { ops: counts.reduce((a, b) => a + b, 0), seconds: (performance.now() - t0) / 1000 };
}

// Leases claimed by `claims`, reported on by `reports` (state kept between the two loads).
let leases: { id: string; lease: string }[] = [];

interface Target {
  label: string;
  url: string;
  token: string | null;
  concurrency: number;
}

const drivers = {
  /** A bare Yoga's no-op mutation. */
  noop: (a: Target & { n: number }) => times(a.label, a.n, a.concurrency, async (i) => void (await post(a.url, null, `mutation($n: Int) { noop(n: $n) }`, { n: i }))),

  /** Claims of one keyword each; the leases are kept for `reports`. */
  claims: async (a: Target & { n: number }) => {
    leases = [];
    return times(a.label, a.n, a.concurrency, async (i) => {
      const c = (await post(a.url, a.token, CLAIM, { c: `bench-${i % a.concurrency}`, n: 1 })).claimKeywords[0];
      leases.push({ id: c.keyword.id, lease: c.leaseToken });
    });
  },

  /** Page reports over the leases `claims` took, page `firstPage` (default 1) of each, then the next, … */
  reports: (a: Target & { n: number; firstPage?: number }) =>
    times(a.label, a.n, a.concurrency, async (i) => {
      const l = leases[i % leases.length]!;
      const page = (a.firstPage ?? 1) + Math.floor(i / leases.length);
      await post(a.url, a.token, REPORT, { i: { keywordId: l.id, leaseToken: l.lease, page, totalPages: 50, jobsFound: 10 } });
    }),

  /**
   * `n` claim → complete cycles of `per` keywords each (per: 1, or 32 with the batch mutations),
   * two requests per cycle, or with `pipelined` one: the completion and the next claim together.
   * `report`: a page report (batched) between claim and completion.
   */
  cycles: async (a: Target & { n: number; per: number; pipelined: boolean; report?: boolean; tag: string }) => {
    let left = a.n;
    const batched = a.per > 1;
    const complete = async (ks: Lease[]) => {
      if (batched) noItemErrors((await post(a.url, a.token, COMPLETES, { i: ks.map(completion) })).reportCrawlsComplete);
      else await post(a.url, a.token, COMPLETE, { i: completion(ks[0]!) });
    };
    const report = async (ks: Lease[]) => {
      const inputs = ks.map((k) => ({ keywordId: k.keyword.id, leaseToken: k.leaseToken, page: 1, totalPages: 50, jobsFound: 10 }));
      noItemErrors((await post(a.url, a.token, REPORTS, { i: inputs })).reportPagesProgress);
    };
    const result = await workers(a.concurrency, async (w) => {
      const crawler = `${a.tag}-${w}`;
      let done = 0;
      let held: Lease[] = left-- > 0 ? (await post(a.url, a.token, CLAIM, { c: crawler, n: a.per })).claimKeywords : [];
      while (held.length) {
        if (a.report) await report(held);
        const more = left-- > 0;
        let next: Lease[] = [];
        if (a.pipelined && more) {
          const d = await post(a.url, a.token, batched ? COMPLETES_AND_CLAIM : COMPLETE_AND_CLAIM, {
            i: batched ? held.map(completion) : completion(held[0]!),
            c: crawler,
            n: a.per,
          });
          if (batched) noItemErrors(d.reportCrawlsComplete);
          next = d.claimKeywords;
        } else {
          await complete(held);
          if (more) next = (await post(a.url, a.token, CLAIM, { c: crawler, n: a.per })).claimKeywords;
        }
        done += held.length;
        progress(a.label, a.n * a.per - Math.max(left, 0) * a.per, a.n * a.per);
        held = next;
      }
      return done;
    });
    progress(a.label, 1, 1);
    return result;
  },

  /** pg-boss behind a bare Yoga (bench/peers.ts): fetch → complete, or pipelined complete + fetch. */
  pgboss: (a: Target & { queue: string; pipelined: boolean }) =>
    workers(a.concurrency, async () => {
      let done = 0;
      const q = { q: a.queue };
      let id: string | undefined = (await post(a.url, null, `mutation($q: String!) { fetch(queue: $q) { id } }`, q)).fetch[0]?.id;
      while (id) {
        if (a.pipelined) {
          const d = await post(a.url, null, `mutation($q: String!, $id: ID!) { complete(queue: $q, id: $id) fetch(queue: $q) { id } }`, { ...q, id });
          id = d.fetch[0]?.id;
        } else {
          await post(a.url, null, `mutation($q: String!, $id: ID!) { complete(queue: $q, id: $id) }`, { ...q, id });
          id = (await post(a.url, null, `mutation($q: String!) { fetch(queue: $q) { id } }`, q)).fetch[0]?.id;
        }
        done++;
      }
      return done;
    }),
};

type Drivers = typeof drivers;
type Name = keyof Drivers;

/** The parent's handle on the load-generating child process (forked at the first load). */
export class LoadGenerator {
  private child: ChildProcess | null = null;
  private seq = 0;
  private readonly waiting = new Map<number, { resolve: (r: LoadResult) => void; reject: (e: Error) => void }>();

  private start(): ChildProcess {
    const child = fork(fileURLToPath(import.meta.url), ["--child"], { execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
    child.on("message", (m: { id: number; result?: LoadResult; error?: string }) => {
      const w = this.waiting.get(m.id);
      this.waiting.delete(m.id);
      if (m.error !== undefined) w?.reject(new Error(m.error));
      else w?.resolve(m.result!);
    });
    child.on("exit", (code) => {
      for (const w of this.waiting.values()) w.reject(new Error(`load generator exited (${code})`));
      this.waiting.clear();
      this.child = null;
    });
    process.once("exit", () => child.kill());
    return child;
  }

  run<N extends Name>(name: N, args: Parameters<Drivers[N]>[0]): Promise<LoadResult> {
    const child = (this.child ??= this.start());
    const id = ++this.seq;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      child.send({ id, name, args });
    });
  }

  close() {
    this.child?.disconnect();
    this.child = null;
  }
}

if (process.argv.includes("--child")) {
  process.on("message", (m: { id: number; name: Name; args: any }) => {
    (drivers[m.name] as (a: any) => Promise<LoadResult>)(m.args).then(
      (result) => process.send!({ id: m.id, result }),
      (e: Error) => process.send!({ id: m.id, error: e.stack ?? String(e) }),
    );
  });
  process.on("disconnect", () => process.exit(0));
}
