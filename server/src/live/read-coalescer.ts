// Many dashboards ask the same question after every change; answer each key from one read at a
// time and at most one read per interval. An answer is reused until a change to its key is seen
// (or it is older than maxAgeMs); a caller arriving within the interval after a change waits for
// the next read instead of getting an answer that predates the change, so the last word is never
// stale.
import { setTimeout as sleep } from "node:timers/promises";

interface Entry<T> {
  /** Change count of the key when the value was read. */
  version: number;
  at: number;
  value?: Promise<T>;
  next?: Promise<T>;
}

export class ReadCoalescer<T> {
  private entries = new Map<string, Entry<T>>();
  private versions = new Map<string, number>();

  /**
   * @param intervalMs least time between two reads of one key
   * @param maxAgeMs an unchanged key's answer is read again after this long (for values that
   *   move with time alone, like a rate over the last minutes) @default Infinity
   */
  constructor(
    private readonly intervalMs: number,
    private readonly maxAgeMs = Infinity,
    private readonly now: () => number = Date.now,
  ) {}

  /** A change that may alter the answer for `key` has committed. */
  changed(key: string) {
    this.versions.set(key, (this.versions.get(key) ?? 0) + 1);
  }

  get(key: string, read: () => Promise<T>): Promise<T> {
    const version = this.versions.get(key) ?? 0;
    const e = this.entries.get(key);
    if (e?.value && e.version === version && this.now() - e.at < this.maxAgeMs) return e.value;
    if (e?.next) return e.next;
    const entry: Entry<T> = e ?? { version, at: -Infinity };
    const wait = Math.max(0, entry.at + this.intervalMs - this.now());
    const next = (wait > 0 ? sleep(wait) : Promise.resolve()).then(() => {
      // The version as the read starts: a change during the read makes the next caller read again.
      entry.version = this.versions.get(key) ?? 0;
      entry.at = this.now();
      const value = read();
      entry.value = value;
      entry.next = undefined;
      value.catch(() => {
        if (this.entries.get(key) === entry && entry.value === value) this.entries.delete(key);
      });
      return value;
    });
    entry.next = next;
    this.entries.set(key, entry);
    return next;
  }

  /** Forget keys no longer asked for (e.g. yesterday's). */
  forget(keep: (key: string) => boolean) {
    for (const k of this.entries.keys()) if (!keep(k)) this.entries.delete(k);
    for (const k of this.versions.keys()) if (!keep(k)) this.versions.delete(k);
  }
}
