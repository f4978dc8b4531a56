import { describe, expect, it } from "vitest";
import { ReadCoalescer } from "./read-coalescer.ts";

/** A read that returns how many reads ran so far, and can be held open. */
function counter() {
  let reads = 0;
  let release: () => void = () => {};
  let hold = false;
  return {
    read: async () => {
      const n = ++reads;
      if (hold) await new Promise<void>((r) => (release = r));
      return n;
    },
    get reads() {
      return reads;
    },
    hold(on: boolean) {
      hold = on;
      if (!on) release();
    },
  };
}

describe("ReadCoalescer", () => {
  it("reuses an answer until a change to its key is seen", async () => {
    const c = new ReadCoalescer<number>(0);
    const r = counter();
    expect(await c.get("boss", r.read)).toBe(1);
    expect(await c.get("boss", r.read)).toBe(1);
    expect(await c.get("qcwy", r.read)).toBe(2);
    c.changed("boss");
    expect(await c.get("boss", r.read)).toBe(3);
    expect(await c.get("qcwy", r.read)).toBe(2);
  });

  it("callers during a read share it", async () => {
    const c = new ReadCoalescer<number>(0);
    const r = counter();
    r.hold(true);
    const all = Promise.all([c.get("k", r.read), c.get("k", r.read), c.get("k", r.read)]);
    await new Promise((res) => setImmediate(res));
    r.hold(false);
    expect(await all).toEqual([1, 1, 1]);
    expect(r.reads).toBe(1);
  });

  it("after a change within the interval, waits for the next read rather than answering stale", async () => {
    let now = 0;
    const c = new ReadCoalescer<number>(40, Infinity, () => now);
    const r = counter();
    expect(await c.get("k", r.read)).toBe(1);
    c.changed("k");
    now = 10;
    const pending = [c.get("k", r.read), c.get("k", r.read)];
    now = 50;
    expect(await Promise.all(pending)).toEqual([2, 2]);
    expect(r.reads).toBe(2);
  });

  it("a change during a read makes the next caller read again", async () => {
    const c = new ReadCoalescer<number>(0);
    const r = counter();
    r.hold(true);
    const first = c.get("k", r.read);
    await new Promise((res) => setImmediate(res));
    c.changed("k");
    r.hold(false);
    expect(await first).toBe(1);
    expect(await c.get("k", r.read)).toBe(2);
  });

  it("reads an unchanged key again after maxAgeMs; a failed read is not kept", async () => {
    let now = 0;
    const c = new ReadCoalescer<number>(0, 100, () => now);
    const r = counter();
    expect(await c.get("k", r.read)).toBe(1);
    now = 99;
    expect(await c.get("k", r.read)).toBe(1);
    now = 100;
    expect(await c.get("k", r.read)).toBe(2);
    await expect(c.get("x", () => Promise.reject(new Error("down")))).rejects.toThrow("down");
    await new Promise((res) => setImmediate(res));
    expect(await c.get("x", r.read)).toBe(3);
  });
});
