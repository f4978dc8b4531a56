// Admin: paste cities and jobs, import their cross product into a source.
import { useState } from "react";
import { useMutation } from "urql";
import { ImportKeywordsDocument, type SourceSettingsFragment } from "../gql/graphql.ts";
import { splitList } from "../keywords/format.ts";

export function ImportForm(props: { sources: SourceSettingsFragment[] }) {
  const [source, setSource] = useState(props.sources[0]?.id ?? "");
  const [cities, setCities] = useState("");
  const [jobs, setJobs] = useState("");
  const [result, run] = useMutation(ImportKeywordsDocument);
  const c = splitList(cities);
  const j = splitList(jobs);
  const done = result.data?.importKeywords;
  return (
    <section className="card import" aria-labelledby="import-title">
      <h2 id="import-title">Import keywords</h2>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const r = await run({ source, cities: c, jobs: j });
          if (!r.error) {
            setCities("");
            setJobs("");
          }
        }}
      >
        <label>
          Source
          <select value={source} onChange={(e) => setSource(e.target.value)}>
            {props.sources.map((s) => (
              <option key={s.id} value={s.id}>
                {s.id}
              </option>
            ))}
          </select>
        </label>
        <div className="two">
          <label>
            Cities (one per line or comma-separated)
            <textarea rows={4} value={cities} onChange={(e) => setCities(e.target.value)} />
          </label>
          <label>
            Jobs
            <textarea rows={4} value={jobs} onChange={(e) => setJobs(e.target.value)} />
          </label>
        </div>
        <button type="submit" disabled={!source || c.length === 0 || j.length === 0 || result.fetching}>
          Import {c.length * j.length || ""} keywords
        </button>
        {done && (
          <span className="ok" data-testid="import-result">
            {done.created} created, {done.existing} already there ({done.source.keywordCount} in {done.source.id})
          </span>
        )}
        {result.error && <span className="error">{result.error.graphQLErrors[0]?.message ?? result.error.message}</span>}
      </form>
    </section>
  );
}
