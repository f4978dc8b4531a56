// Covered offset ranges: which upstream offsets a task has already dealt with (visited, or declared
// stale by the first run's expiry rule). Runs pick their batches from what is NOT covered, newest
// first, so a run stopped half-way leaves a gap the next run fills (the seed saved only a start
// offset and skipped that gap forever). Ranges are half-open [from, to), sorted and merged.

export type Range = readonly [from: number, to: number];

/** Sorted, merged, without empty ranges. */
export function normalize(ranges: readonly Range[]): Range[] {
  const sorted = ranges.filter(([a, b]) => b > a).slice().sort((x, y) => x[0] - y[0]);
  const out: [number, number][] = [];
  for (const [a, b] of sorted) {
    const last = out.at(-1);
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

export function addRange(ranges: readonly Range[], from: number, to: number): Range[] {
  return normalize([...ranges, [from, to]]);
}

/** Offsets covered in [0, total). */
export function coveredCount(ranges: readonly Range[], total: number): number {
  let n = 0;
  for (const [a, b] of ranges) n += Math.max(0, Math.min(b, total) - a);
  return n;
}

/** Whether offset 0 is covered: the first (backfill) descent has reached the bottom. */
export function reachesBottom(ranges: readonly Range[]): boolean {
  return ranges.length > 0 && ranges[0]![0] === 0;
}

/**
 * The next batch to fetch: the top `batchSize` offsets of the highest uncovered range below
 * `total`, or null when [0, total) is covered.
 */
export function nextBatch(ranges: readonly Range[], total: number, batchSize: number): Range | null {
  let hi = total;
  for (let i = ranges.length - 1; i >= 0; i--) {
    const [a, b] = ranges[i]!;
    if (a >= hi) continue; // above the top (the upstream shrank): ignore
    if (b < hi) return [Math.max(b, hi - batchSize), hi]; // [b, hi) is the highest gap
    hi = a; // covered up to hi: look below this range
  }
  return hi > 0 ? [Math.max(0, hi - batchSize), hi] : null;
}

export function parseRanges(json: string): Range[] {
  const v = JSON.parse(json) as unknown;
  if (!Array.isArray(v)) return [];
  return normalize(v.filter((r): r is [number, number] => Array.isArray(r) && r.length === 2 && r.every(Number.isInteger)));
}

export const formatRanges = (ranges: readonly Range[]) => JSON.stringify(ranges);
