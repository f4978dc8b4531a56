// One collector task: live progress from the `collectorProgress` subscription (coverage bar,
// counts, status, last update and error), its lag (read apart, throttled: it asks the upstream and
// the sink), its recent runs, and for admins start (optionally after a reset) / stop / reset.
import { useEffect, useState } from "react";
import { useMutation, useQuery, useSubscription } from "urql";
import {
  type CollectorTaskRowFragment,
  CollectorLagDocument,
  CollectorProgressDocument,
  ResetCollectorTaskDocument,
  StartCollectorTaskDocument,
  StopCollectorTaskDocument,
} from "../gql/graphql.ts";
import { age } from "../keywords/format.ts";
import { useNow } from "../live/use-now.ts";
import { useRefresh } from "../live/use-refresh.ts";
import { coverage, lagText, mergeRuns, STATUS_CLASS } from "./format.ts";

/** Lag is re-read at most this often while progress moves, and this often when it does not. */
const LAG_THROTTLE_MS = 2_000;
const LAG_POLL_MS = 10_000;

const time = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleTimeString() : "—");
const n = (v: number) => v.toLocaleString("en-US");

export function TaskCard(props: { task: CollectorTaskRowFragment; isAdmin: boolean; connects: number; onProgress: () => void }) {
  const { task, onProgress } = props;
  const [live] = useSubscription({ query: CollectorProgressDocument, variables: { taskId: task.id } });
  // The subscription answers at once and after every batch; until it does, the list's copy.
  const progress = live.data?.collectorProgress ?? task.progress;
  const [lagResult, refetchLag] = useQuery({ query: CollectorLagDocument, variables: { id: task.id } });
  useRefresh(live.data, () => refetchLag({ requestPolicy: "network-only" }), LAG_THROTTLE_MS);
  useRefresh(props.connects, () => refetchLag({ requestPolicy: "network-only" }), 0);
  useEffect(() => {
    const t = setInterval(() => refetchLag({ requestPolicy: "network-only" }), LAG_POLL_MS);
    return () => clearInterval(t);
  }, [refetchLag]);
  useEffect(() => {
    if (live.data) onProgress();
  }, [live.data, onProgress]);
  const now = useNow();

  const cov = coverage(progress);
  const lag = lagText(lagResult.data?.collectorTask?.progress.lag, task.sink);
  const lagError = lagResult.data?.collectorTask?.progress.lag.error;
  return (
    <article className="card collector-task" data-collector-task={task.id}>
      <header>
        <h3>
          {task.name}{" "}
          <span className={`badge ${STATUS_CLASS[progress.status]}`} data-testid="collector-status">
            {progress.status}
          </span>
          {!task.enabled && <span className="badge state-failed">disabled</span>}
        </h3>
        <p className="summary">
          <code>{task.url}</code>
        </p>
        <p className="summary">
          {task.sink}
          {task.stream ? ` ${task.stream}` : ""} · batch {task.batchSize} · fresh ≤ {task.filterDays} d · first run ends after {task.maxExpiredBatches} stale
          batches · {task.schedule ? `schedule ${task.schedule}, next ${time(task.nextRunAt)}` : "no schedule"}
        </p>
      </header>
      <div className="coverage">
        <progress max={cov.of || 1} value={cov.done} title={`${cov.percent}%`} />
        <span data-testid="collector-coverage">
          {n(cov.done)}/{n(cov.of)} offsets covered ({cov.percent}%)
        </span>
      </div>
      <dl className="counts">
        <div>
          <dt>Total</dt>
          <dd data-testid="collector-total">{n(progress.total)}</dd>
        </div>
        <div>
          <dt>Filtered</dt>
          <dd data-testid="collector-filtered">{n(progress.filteredCount)}</dd>
        </div>
        <div>
          <dt>Produced</dt>
          <dd data-testid="collector-produced">{n(progress.producedCount)}</dd>
        </div>
        <div>
          <dt>Last update</dt>
          <dd>{progress.lastUpdate ? `${age(progress.lastUpdate, now)} ago` : "—"}</dd>
        </div>
        <div>
          <dt>Upstream lag</dt>
          <dd data-testid="collector-lag-head">{lag.head}</dd>
        </div>
        <div>
          <dt>Sink lag</dt>
          <dd data-testid="collector-lag-sink">{lag.sink}</dd>
        </div>
      </dl>
      {progress.lastError && (
        <p className="error" data-testid="collector-error">
          {progress.lastError}
        </p>
      )}
      {lagError && <p className="settings-line">lag partly unknown: {lagError}</p>}
      {props.isAdmin && <TaskActions id={task.id} status={progress.status} enabled={task.enabled} />}
      <RecentRuns runs={mergeRuns(task.runs, progress.run)} />
    </article>
  );
}

function TaskActions(props: { id: string; status: CollectorTaskRowFragment["progress"]["status"]; enabled: boolean }) {
  const [resetFirst, setResetFirst] = useState(false);
  const [start, doStart] = useMutation(StartCollectorTaskDocument);
  const [stop, doStop] = useMutation(StopCollectorTaskDocument);
  const [reset, doReset] = useMutation(ResetCollectorTaskDocument);
  const running = props.status === "RUNNING";
  const busy = start.fetching || stop.fetching || reset.fetching;
  // Only the latest action's error: an old refusal must not linger after a success.
  const [last, setLast] = useState<"start" | "stop" | "reset" | null>(null);
  const error = last === "start" ? start.error : last === "stop" ? stop.error : last === "reset" ? reset.error : undefined;
  return (
    <div className="actions" data-testid="collector-actions">
      <button
        type="button"
        disabled={busy || running || !props.enabled}
        onClick={() => {
          setLast("start");
          void doStart({ id: props.id, reset: resetFirst }).then((r) => !r.error && setResetFirst(false));
        }}
      >
        Start
      </button>
      <label className="inline">
        <input type="checkbox" checked={resetFirst} disabled={running} onChange={(e) => setResetFirst(e.target.checked)} /> reset first
      </label>
      <button
        type="button"
        disabled={busy || !running}
        onClick={() => {
          setLast("stop");
          void doStop({ id: props.id });
        }}
      >
        Stop
      </button>
      <button
        type="button"
        disabled={busy || running}
        onClick={() => {
          setLast("reset");
          void doReset({ id: props.id });
        }}
      >
        Reset
      </button>
      {error && <span className="error">{error.graphQLErrors[0]?.message ?? error.message}</span>}
    </div>
  );
}

function RecentRuns({ runs }: { runs: CollectorTaskRowFragment["runs"] }) {
  if (runs.length === 0) return <p className="settings-line">No runs yet.</p>;
  return (
    <div className="table-scroll">
      <table className="compact" data-testid="collector-runs">
        <thead>
          <tr>
            <th>Run</th>
            <th>Started</th>
            <th>Trigger</th>
            <th>Status</th>
            <th>Batches</th>
            <th>Fetched</th>
            <th>Filtered</th>
            <th>Produced</th>
            <th>Dupl.</th>
            <th>Finished</th>
            <th>Error</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((r) => (
            <tr key={r.id} data-run={r.id}>
              <td className="num">{r.id}</td>
              <td>{time(r.startedAt)}</td>
              <td>{r.trigger}</td>
              <td>
                <span className={`badge ${STATUS_CLASS[r.status]}`}>{r.status}</span>
              </td>
              <td className="num">{n(r.batches)}</td>
              <td className="num">{n(r.fetchedCount)}</td>
              <td className="num">{n(r.filteredCount)}</td>
              <td className="num" data-testid="run-produced">
                {n(r.producedCount)}
              </td>
              <td className="num">{n(r.duplicateCount)}</td>
              <td>{time(r.finishedAt)}</td>
              <td className="error-cell" title={r.error}>
                {r.error}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
