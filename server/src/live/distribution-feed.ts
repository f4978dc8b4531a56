// crawlStatusDistribution's engine. Changes are coalesced per source: however many reports land in
// a burst, stats are computed once per `throttleMs` window and that one result goes to every
// subscriber of the source. Nothing is computed for a source nobody watches.
import { Repeater } from "graphql-yoga";
import type { Logger } from "pino";
import type { CrawlStats } from "../crawl/stats.ts";

type Listener = (stats: CrawlStats) => void;

export class DistributionFeed {
  private listeners = new Map<string, Set<Listener>>();
  private timers = new Map<string, NodeJS.Timeout>();
  private lastFlush = new Map<string, number>();
  /** Sequence of computations per source, so a slow older result never overwrites a newer one. */
  private seq = new Map<string, { started: number; delivered: number }>();

  constructor(
    private readonly compute: (sourceId: string) => Promise<CrawlStats>,
    private readonly throttleMs: number,
    private readonly log: Logger,
  ) {}

  /** Something about `sourceId` changed. */
  changed(sourceId: string): void {
    if (!this.listeners.get(sourceId)?.size || this.timers.has(sourceId)) return;
    const wait = Math.max(0, (this.lastFlush.get(sourceId) ?? 0) + this.throttleMs - Date.now());
    this.timers.set(
      sourceId,
      setTimeout(() => void this.flush(sourceId), wait),
    );
  }

  private async flush(sourceId: string) {
    this.timers.delete(sourceId);
    this.lastFlush.set(sourceId, Date.now());
    const s = this.seq.get(sourceId) ?? { started: 0, delivered: 0 };
    this.seq.set(sourceId, s);
    const mine = ++s.started;
    let stats: CrawlStats;
    try {
      stats = await this.compute(sourceId);
    } catch (err) {
      this.log.error({ err, sourceId }, "distribution: stats failed; next change retries");
      return;
    }
    if (mine < s.delivered) return;
    s.delivered = mine;
    for (const l of this.listeners.get(sourceId) ?? []) l(stats);
  }

  /** The distribution now, then after every (coalesced) change, until the consumer stops. */
  subscribe(sourceId: string): AsyncIterable<CrawlStats> {
    return new Repeater<CrawlStats>(async (push, stop) => {
      let live = false;
      const listener: Listener = (stats) => {
        live = true;
        void push(stats);
      };
      let set = this.listeners.get(sourceId);
      if (!set) this.listeners.set(sourceId, (set = new Set()));
      set.add(listener);
      try {
        const first = await this.compute(sourceId);
        if (!live) await push(first);
      } catch (err) {
        stop(err);
      }
      await stop;
      set.delete(listener);
      if (set.size === 0) {
        this.listeners.delete(sourceId);
        clearTimeout(this.timers.get(sourceId));
        this.timers.delete(sourceId);
      }
    });
  }

  /** Every watched source may have changed (changes may have been missed): recompute them all. */
  refreshAll(): void {
    for (const sourceId of this.listeners.keys()) this.changed(sourceId);
  }

  subscriberCount(): number {
    let n = 0;
    for (const s of this.listeners.values()) n += s.size;
    return n;
  }

  close(): void {
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }
}
