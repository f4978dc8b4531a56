// How a collector task reads: its coverage bar, its lag, its status colour, and the create form's
// fields turned into the mutation's input.
import type { CollectorLagQuery, CollectorSink, CollectorStatus, CreateCollectorTaskInput } from "../gql/graphql.ts";

/** The runs to list, newest first: the live copy of the run going on replaces the list's. */
export function mergeRuns<R extends { id: string }>(runs: R[], live: R | null | undefined): R[] {
  if (!live) return runs;
  if (runs.some((r) => r.id === live.id)) return runs.map((r) => (r.id === live.id ? live : r));
  // A run the list has not read yet (just started) goes first: run ids grow with time.
  return Number(live.id) > Number(runs[0]?.id ?? 0) ? [live, ...runs] : runs;
}

/** Offsets dealt with out of the upstream total the latest run saw. */
export function coverage(p: { coveredCount: number; total: number }) {
  const of = Math.max(0, p.total);
  const done = Math.min(Math.max(0, p.coveredCount), of);
  // Floor: 100% only when every offset is covered.
  return { done, of, percent: of > 0 ? Math.floor((done / of) * 100) : 0 };
}

/** The status badge's colour, from the keyword states' palette. */
export const STATUS_CLASS: Record<CollectorStatus, string> = {
  IDLE: "state-idle",
  RUNNING: "state-crawling",
  COMPLETED: "state-completed",
  STOPPED: "state-partial",
  ERROR: "state-failed",
};

type Lag = NonNullable<CollectorLagQuery["collectorTask"]>["progress"]["lag"];

/** "12 behind head 10,010" / "up to date (head 500)" / "unknown"; and the sink's side. */
export function lagText(lag: Lag | null | undefined, sink: CollectorSink): { head: string; sink: string } {
  if (!lag) return { head: "…", sink: "…" };
  const n = (v: number) => v.toLocaleString("en-US");
  const head =
    lag.behindHead === null || lag.behindHead === undefined || lag.head === null || lag.head === undefined
      ? "unknown"
      : lag.behindHead === 0
        ? `up to date (head ${n(lag.head)})`
        : `${n(lag.behindHead)} behind head ${n(lag.head)}`;
  const held = lag.sinkMessages === null || lag.sinkMessages === undefined ? null : n(lag.sinkMessages);
  // JetStream consumers' pending records; the database sink has no consumers to wait for.
  const sinkText =
    lag.sinkPending !== null && lag.sinkPending !== undefined
      ? `${n(lag.sinkPending)} pending for consumers${held ? ` of ${held}` : ""}`
      : held === null
        ? "unknown"
        : sink === "NATS"
          ? `${held} in stream, no consumers`
          : `${held} stored`;
  return { head, sink: sinkText };
}

/** What the create form holds: text, as typed. */
export interface TaskDraft {
  name: string;
  url: string;
  batchSize: string;
  filterDays: string;
  maxExpiredBatches: string;
  sink: CollectorSink;
  schedule: string;
}

export const EMPTY_DRAFT: TaskDraft = { name: "", url: "", batchSize: "100", filterDays: "7", maxExpiredBatches: "3", sink: "DATABASE", schedule: "" };

/** Ranges the server enforces (CreateCollectorTaskInput's descriptions), checked before sending. */
const LIMITS = { batchSize: [1, 1000], filterDays: [0, 3650], maxExpiredBatches: [0, 1000] } as const;

/** The form's fields as the mutation's input, or what is wrong with them. */
export function taskInput(d: TaskDraft): { input: CreateCollectorTaskInput; error?: undefined } | { input?: undefined; error: string } {
  const name = d.name.trim();
  const url = d.url.trim();
  if (!name) return { error: "a name is needed" };
  if (!/^https?:\/\/\S+$/i.test(url)) return { error: "the url must start with http:// or https://" };
  const nums = {} as Record<keyof typeof LIMITS, number>;
  for (const [key, [min, max]] of Object.entries(LIMITS) as [keyof typeof LIMITS, readonly [number, number]][]) {
    const text = d[key].trim();
    const v = Number(text);
    if (text === "" || !Number.isInteger(v) || v < min || v > max) return { error: `${key} must be a whole number ${min}–${max}` };
    nums[key] = v;
  }
  const schedule = d.schedule.trim();
  return { input: { name, url, ...nums, sink: d.sink, ...(schedule ? { schedule } : {}) } };
}
