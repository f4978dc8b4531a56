// Admin: edit a source's settings (maxPages, maxRetries, staleAfterSeconds, enabled).
import { useState } from "react";
import { useMutation } from "urql";
import { type SourceSettingsFragment, UpdateSourceDocument } from "../gql/graphql.ts";

export function SourceSettingsForm({ source }: { source: SourceSettingsFragment }) {
  const [open, setOpen] = useState(false);
  const [draft, setDraft] = useState(source);
  const [result, run] = useMutation(UpdateSourceDocument);
  if (!open) {
    return (
      <button
        type="button"
        className="link"
        onClick={() => {
          setDraft(source);
          setOpen(true);
        }}
      >
        Edit settings
      </button>
    );
  }
  const num = (key: "maxPages" | "maxRetries" | "staleAfterSeconds", label: string) => (
    <label>
      {label}
      <input type="number" min={key === "maxRetries" ? 0 : 1} value={draft[key]} onChange={(e) => setDraft({ ...draft, [key]: Number(e.target.value) })} />
    </label>
  );
  return (
    <form
      className="settings"
      onSubmit={async (e) => {
        e.preventDefault();
        const { maxPages, maxRetries, staleAfterSeconds, enabled } = draft;
        const r = await run({ id: source.id, input: { maxPages, maxRetries, staleAfterSeconds, enabled } });
        if (!r.error) setOpen(false);
      }}
    >
      {num("maxPages", "maxPages")}
      {num("maxRetries", "maxRetries")}
      {num("staleAfterSeconds", "stale after (s)")}
      <label className="inline">
        <input type="checkbox" checked={draft.enabled} onChange={(e) => setDraft({ ...draft, enabled: e.target.checked })} /> enabled
      </label>
      <button type="submit" disabled={result.fetching}>
        Save
      </button>
      <button type="button" className="link" onClick={() => setOpen(false)}>
        Cancel
      </button>
      {result.error && <span className="error">{result.error.graphQLErrors[0]?.message ?? result.error.message}</span>}
    </form>
  );
}
