// Query results → uPlot's columnar data (x = unix seconds, then one array per series).
import type { AlignedData } from "uplot";
import type { SourceActivityQuery } from "../gql/graphql.ts";

const seconds = (iso: string) => Date.parse(iso) / 1000;

export function activitySeries(points: SourceActivityQuery["pageActivity"]): AlignedData {
  return [points.map((p) => seconds(p.at)), points.map((p) => p.pages), points.map((p) => p.jobsFound)];
}

/**
 * Completion as a percentage of the source's keywords, from the day's start to `now`: a step at
 * each minute the count moved, held flat to now.
 */
export function completionSeries(
  points: SourceActivityQuery["completionSeries"],
  total: number,
  dayStart: number,
  now: number,
): AlignedData {
  const pct = (n: number) => (total > 0 ? Math.round((n / total) * 1000) / 10 : 0);
  const xs = [dayStart / 1000, ...points.map((p) => seconds(p.at))];
  const ys = [0, ...points.map((p) => pct(p.completed))];
  const last = ys.at(-1) ?? 0;
  if ((xs.at(-1) ?? 0) < now / 1000) {
    xs.push(now / 1000);
    ys.push(last);
  }
  return [xs, ys];
}
