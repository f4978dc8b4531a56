import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { throttle } from "./use-refresh.ts";

describe("throttle", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("runs the first call at once and a burst's last call once, after the interval", () => {
    const fn = vi.fn();
    const t = throttle(fn, 1000);
    t.call();
    expect(fn).toHaveBeenCalledTimes(1);
    for (let i = 0; i < 10; i++) t.call();
    expect(fn).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(999);
    expect(fn).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(1);
    expect(fn).toHaveBeenCalledTimes(2);
  });

  it("a call after a quiet interval runs at once; cancel drops a pending one", () => {
    const fn = vi.fn();
    const t = throttle(fn, 1000);
    t.call();
    vi.advanceTimersByTime(5000);
    t.call();
    expect(fn).toHaveBeenCalledTimes(2);
    t.call();
    t.cancel();
    vi.advanceTimersByTime(5000);
    expect(fn).toHaveBeenCalledTimes(2);
  });
});
