// Re-run a query when the data behind it moved (a distribution update, a reconnect), at most once
// per interval: a burst of changes costs one request at its start and one at its end.
import { useEffect, useRef } from "react";

export function throttle(fn: () => void, intervalMs: number, now: () => number = Date.now) {
  let last = -Infinity;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const run = () => {
    timer = null;
    last = now();
    fn();
  };
  return {
    call() {
      if (timer) return;
      const wait = last + intervalMs - now();
      if (wait <= 0) run();
      else timer = setTimeout(run, wait);
    },
    cancel() {
      if (timer) clearTimeout(timer);
      timer = null;
    },
  };
}

/** Calls `refetch` (throttled) whenever `signal` changes after the first render. */
export function useRefresh(signal: unknown, refetch: () => void, intervalMs: number) {
  const latest = useRef(refetch);
  latest.current = refetch;
  const throttled = useRef<ReturnType<typeof throttle> | null>(null);
  const first = useRef(true);
  useEffect(() => {
    throttled.current = throttle(() => latest.current(), intervalMs);
    return () => throttled.current?.cancel();
  }, [intervalMs]);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    throttled.current?.call();
  }, [signal]);
}
