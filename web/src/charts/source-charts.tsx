// Per source: pages and jobs found per minute over the last hours, and completion over the day.
import { useMemo } from "react";
import { useQuery } from "urql";
import uPlot, { type Options } from "uplot";
import { SourceActivityDocument, type SourceSettingsFragment } from "../gql/graphql.ts";
import { useRefresh } from "../live/use-refresh.ts";
import { activitySeries, completionSeries } from "./series.ts";
import { UPlotChart } from "./uplot-chart.tsx";

export const ACTIVITY_MINUTES = 180;
/** Charts move with the data but need not redraw more often than this. */
const REFRESH_MS = 5000;

const activityOptions: Omit<Options, "width"> = {
  height: 160,
  legend: { show: true },
  scales: { x: { time: true } },
  series: [
    {},
    { label: "pages/min", stroke: "#2563eb", width: 1.5, scale: "pages" },
    { label: "jobs/min", stroke: "#16a34a", width: 1.5, scale: "jobs" },
  ],
  axes: [{}, { scale: "pages", label: "pages" }, { scale: "jobs", side: 1, label: "jobs", grid: { show: false } }],
};

const completionOptions: Omit<Options, "width"> = {
  height: 120,
  scales: { x: { time: true }, y: { range: [0, 100] } },
  series: [{}, { label: "completed %", stroke: "#16a34a", fill: "rgba(22,163,74,0.12)", width: 1.5, paths: uPlot.paths.stepped!({ align: 1 }) }],
  axes: [{}, { values: (_u, ticks) => ticks.map((t) => `${t}%`) }],
};

export function SourceCharts(props: { source: SourceSettingsFragment; total: number; dayStart: number; tick: number; connects: number }) {
  const [result, refetch] = useQuery({
    query: SourceActivityDocument,
    variables: { source: props.source.id, minutes: ACTIVITY_MINUTES },
  });
  useRefresh(props.tick, () => refetch({ requestPolicy: "network-only" }), REFRESH_MS);
  useRefresh(props.connects, () => refetch({ requestPolicy: "network-only" }), 0);
  const activity = useMemo(() => activitySeries(result.data?.pageActivity ?? []), [result.data]);
  const completion = useMemo(
    () => completionSeries(result.data?.completionSeries ?? [], props.total, props.dayStart, Date.now()),
    [result.data, props.total, props.dayStart],
  );
  return (
    <article className="card chart-card">
      <h3>{props.source.name}</h3>
      <p className="chart-title">Pages and jobs per minute, last {ACTIVITY_MINUTES / 60} h</p>
      <UPlotChart options={activityOptions} data={activity} label={`${props.source.id} pages and jobs per minute`} />
      <p className="chart-title">Completed today</p>
      <UPlotChart options={completionOptions} data={completion} label={`${props.source.id} completion today`} />
    </article>
  );
}
