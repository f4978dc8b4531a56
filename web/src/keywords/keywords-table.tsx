// Keywords, a server-side page at a time, filtered by source, status and city/job text. Re-read
// (throttled) whenever a distribution moves, so statuses and heartbeats stay current.
import { useEffect, useState } from "react";
import { useQuery } from "urql";
import { type CrawlStatus, KeywordsDocument, type SourceSettingsFragment } from "../gql/graphql.ts";
import { useNow } from "../live/use-now.ts";
import { useRefresh } from "../live/use-refresh.ts";
import { STATES } from "../state-machine/layout.ts";
import { KeywordDetail } from "./keyword-detail.tsx";
import { age, pageProgress } from "./format.ts";
import { StatusBadge } from "./status-badge.tsx";

export const PAGE_SIZE = 25;
const SEARCH_DELAY_MS = 300;

export function KeywordsTable(props: { sources: SourceSettingsFragment[]; isAdmin: boolean; tick: number; connects: number }) {
  const [source, setSource] = useState("");
  const [status, setStatus] = useState<CrawlStatus | "">("");
  const [searchInput, setSearchInput] = useState("");
  const [search, setSearch] = useState("");
  // Cursors of the pages visited: page n starts after cursors[n].
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const [selected, setSelected] = useState<string | null>(null);
  const now = useNow();

  useEffect(() => {
    const t = setTimeout(() => setSearch(searchInput.trim()), SEARCH_DELAY_MS);
    return () => clearTimeout(t);
  }, [searchInput]);
  useEffect(() => setCursors([null]), [source, status, search]);

  const [result, refetch] = useQuery({
    query: KeywordsDocument,
    variables: {
      source: source || null,
      status: status || null,
      search: search || null,
      first: PAGE_SIZE,
      after: cursors.at(-1) ?? null,
    },
  });
  useRefresh(props.tick, () => refetch({ requestPolicy: "network-only" }), 1000);
  useRefresh(props.connects, () => refetch({ requestPolicy: "network-only" }), 0);

  const conn = result.data?.keywords;
  const page = cursors.length;
  return (
    <section className="card keywords" aria-labelledby="keywords-title">
      <h2 id="keywords-title">Keywords</h2>
      <div className="filters">
        <label>
          Source
          <select value={source} onChange={(e) => setSource(e.target.value)}>
            <option value="">all</option>
            {props.sources.map((s) => (
              <option key={s.id} value={s.id}>
                {s.id}
              </option>
            ))}
          </select>
        </label>
        <label>
          Status
          <select value={status} onChange={(e) => setStatus(e.target.value as CrawlStatus | "")}>
            <option value="">all</option>
            {STATES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Search
          <input type="search" placeholder="city or job" value={searchInput} onChange={(e) => setSearchInput(e.target.value)} />
        </label>
        <span className="total" data-testid="keywords-total">
          {conn ? `${conn.totalCount} keywords` : result.fetching ? "loading…" : ""}
        </span>
      </div>
      {result.error && <p className="error">{result.error.message}</p>}
      <div className="table-scroll">
        <table data-testid="keywords-table">
          <thead>
            <tr>
              <th>Source</th>
              <th>City</th>
              <th>Job</th>
              <th>Status</th>
              <th>Pages</th>
              <th>Jobs</th>
              <th>Crawler</th>
              <th>Heartbeat</th>
              <th>Retries</th>
              <th>Error</th>
            </tr>
          </thead>
          <tbody>
            {conn?.edges.map(({ node: kw }) => {
              const p = pageProgress(kw);
              return (
                <tr
                  key={kw.id}
                  data-keyword-id={kw.id}
                  className={selected === kw.id ? "selected" : undefined}
                  onClick={() => setSelected(selected === kw.id ? null : kw.id)}
                >
                  <td>{kw.sourceId}</td>
                  <td>{kw.city}</td>
                  <td>{kw.job}</td>
                  <td>
                    <StatusBadge status={kw.status} />
                  </td>
                  <td>
                    <progress max={p.of} value={p.done} title={`${p.percent}%`} /> {p.done}/{p.of}
                  </td>
                  <td className="num">{kw.jobsFound}</td>
                  <td>{kw.crawlerId || "—"}</td>
                  <td>{kw.status === "CRAWLING" ? age(kw.heartbeatAt, now) : "—"}</td>
                  <td className="num">{kw.retryCount}</td>
                  <td className="error-cell" title={kw.errorMessage}>
                    {kw.errorMessage}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      <div className="pager">
        <button type="button" disabled={page <= 1} onClick={() => setCursors(cursors.slice(0, -1))}>
          ← Previous
        </button>
        <span>
          page {page}
          {conn ? ` of ${Math.max(1, Math.ceil(conn.totalCount / PAGE_SIZE))}` : ""}
        </span>
        <button
          type="button"
          disabled={!conn?.pageInfo.hasNextPage}
          onClick={() => conn?.pageInfo.endCursor && setCursors([...cursors, conn.pageInfo.endCursor])}
        >
          Next →
        </button>
      </div>
      {selected && <KeywordDetail id={selected} isAdmin={props.isAdmin} tick={props.tick} onClose={() => setSelected(null)} />}
    </section>
  );
}
