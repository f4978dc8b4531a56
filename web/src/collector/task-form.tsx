// Admin: create a collector task (name, upstream url, batch size, freshness window, first-run
// expiry, sink, schedule). The server validates again; its refusal is shown as it comes.
import { useState } from "react";
import { useMutation } from "urql";
import { type CollectorSink, CreateCollectorTaskDocument } from "../gql/graphql.ts";
import { EMPTY_DRAFT, type TaskDraft, taskInput } from "./format.ts";

/** KAFKA is refused by this build's server (SINK_UNAVAILABLE), so it is not offered. */
const SINKS: CollectorSink[] = ["DATABASE", "NATS"];

export function TaskForm(props: { onCreated: () => void }) {
  const [draft, setDraft] = useState<TaskDraft>(EMPTY_DRAFT);
  const [result, run] = useMutation(CreateCollectorTaskDocument);
  const [shown, setShown] = useState<string | null>(null);
  const checked = taskInput(draft);
  const field = (key: Exclude<keyof TaskDraft, "sink">, label: string, extra: { type?: string; placeholder?: string } = {}) => (
    <label>
      {label}
      <input
        type={extra.type ?? "text"}
        placeholder={extra.placeholder}
        value={draft[key]}
        onChange={(e) => setDraft({ ...draft, [key]: e.target.value })}
      />
    </label>
  );
  return (
    <form
      className="collector-form"
      aria-label="New collector task"
      onSubmit={async (e) => {
        e.preventDefault();
        if (!checked.input) return setShown(checked.error);
        setShown(null);
        const r = await run({ input: checked.input });
        if (!r.error) {
          setDraft(EMPTY_DRAFT);
          props.onCreated();
        }
      }}
    >
      {field("name", "Name")}
      {field("url", "Upstream URL", { placeholder: "http://host/api/jobs" })}
      {field("batchSize", "Batch size", { type: "number" })}
      {field("filterDays", "Fresh within (days)", { type: "number" })}
      {field("maxExpiredBatches", "Max expired batches", { type: "number" })}
      <label>
        Sink
        <select value={draft.sink} onChange={(e) => setDraft({ ...draft, sink: e.target.value as CollectorSink })}>
          {SINKS.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </label>
      {field("schedule", "Schedule (cron, optional)", { placeholder: "*/10 * * * *" })}
      <button type="submit" disabled={result.fetching}>
        Create task
      </button>
      {result.data && !result.error && (
        <span className="ok" data-testid="collector-created">
          created {result.data.createCollectorTask.name}
        </span>
      )}
      {(shown ?? result.error) && (
        <span className="error" data-testid="collector-form-error">
          {shown ?? result.error?.graphQLErrors[0]?.message ?? result.error?.message}
        </span>
      )}
    </form>
  );
}
