// The incremental collector's tasks: one live card each, re-read (throttled) as their progress
// moves so the recent runs follow; admins also get the form to create one.
import { useCallback, useReducer } from "react";
import { useQuery } from "urql";
import { CollectorTasksDocument } from "../gql/graphql.ts";
import { useRefresh } from "../live/use-refresh.ts";
import { TaskCard } from "./task-card.tsx";
import { TaskForm } from "./task-form.tsx";

/** The task list (runs, next scheduled run) is re-read at most this often while progress moves. */
const LIST_THROTTLE_MS = 1_000;

export function CollectorPanel(props: { isAdmin: boolean; connects: number }) {
  const [result, refetch] = useQuery({ query: CollectorTasksDocument });
  const [moved, bump] = useReducer((n: number) => n + 1, 0);
  const onProgress = useCallback(() => bump(), []);
  useRefresh(moved, () => refetch({ requestPolicy: "network-only" }), LIST_THROTTLE_MS);
  useRefresh(props.connects, () => refetch({ requestPolicy: "network-only" }), 0);
  const tasks = result.data?.collectorTasks ?? [];
  return (
    <section className="card collector" aria-labelledby="collector-title">
      <h2 id="collector-title">Collector</h2>
      {result.error && <p className="error">{result.error.graphQLErrors[0]?.message ?? result.error.message}</p>}
      {tasks.length === 0 && !result.fetching && <p>No collector task yet.</p>}
      <div className="grid">
        {tasks.map((t) => (
          <TaskCard key={t.id} task={t} isAdmin={props.isAdmin} connects={props.connects} onProgress={onProgress} />
        ))}
      </div>
      {props.isAdmin && (
        <details className="collector-new">
          <summary>New collector task</summary>
          <TaskForm onCreated={() => refetch({ requestPolicy: "network-only" })} />
        </details>
      )}
    </section>
  );
}
