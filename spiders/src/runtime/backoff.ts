// Bounded retries with exponential backoff and jitter (p-retry), shared by site and server calls.
import pRetry, { AbortError } from "p-retry";

export interface Backoff {
  minMs: number;
  maxMs: number;
}

export { AbortError };

/**
 * Retry `fn` on every error but those `permanent` names (and AbortError), `retries` times or for
 * `maxRetryTime` ms, with delays minMs·2^n (× 1–2 random jitter, so a fleet does not retry in step).
 */
export function retry<T>(
  fn: (attempt: number) => Promise<T>,
  opts: Backoff & { retries?: number; maxRetryTime?: number; signal?: AbortSignal; permanent?: (e: Error) => boolean; onRetry?: (e: Error, attempt: number) => void },
): Promise<T> {
  return pRetry(fn, {
    retries: opts.retries ?? Number.POSITIVE_INFINITY,
    maxRetryTime: opts.maxRetryTime ?? Number.POSITIVE_INFINITY,
    minTimeout: opts.minMs,
    maxTimeout: opts.maxMs,
    factor: 2,
    randomize: true,
    signal: opts.signal,
    shouldRetry: ({ error }) => !opts.permanent?.(error),
    onFailedAttempt: ({ error, attemptNumber, retriesLeft }) => {
      if (retriesLeft > 0 && !opts.permanent?.(error)) opts.onRetry?.(error, attemptNumber);
    },
  });
}
