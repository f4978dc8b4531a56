// One keyword: its CrawlEvent timeline and today's page reports, plus the operator's actions.
import { useMutation, useQuery } from "urql";
import {
  ForceReleaseKeywordDocument,
  KeywordDetailDocument,
  ResetKeywordDocument,
  RetryKeywordDocument,
} from "../gql/graphql.ts";
import { useRefresh } from "../live/use-refresh.ts";
import { StatusBadge } from "./status-badge.tsx";

const time = (iso: string) => new Date(iso).toLocaleTimeString();

export function KeywordDetail(props: { id: string; isAdmin: boolean; tick: number; onClose: () => void }) {
  const [result, refetch] = useQuery({ query: KeywordDetailDocument, variables: { id: props.id } });
  useRefresh(props.tick, () => refetch({ requestPolicy: "network-only" }), 1000);
  const [reset, doReset] = useMutation(ResetKeywordDocument);
  const [release, doRelease] = useMutation(ForceReleaseKeywordDocument);
  const [retry, doRetry] = useMutation(RetryKeywordDocument);
  const kw = result.data?.keyword;
  const busy = reset.fetching || release.fetching || retry.fetching;
  const error = reset.error ?? release.error ?? retry.error;
  const act = async (run: (v: { id: string }) => Promise<unknown>) => {
    await run({ id: props.id });
    refetch({ requestPolicy: "network-only" });
  };

  if (!kw) return <aside className="card detail">{result.error ? result.error.message : "loading…"}</aside>;
  return (
    <aside className="card detail" data-testid="keyword-detail">
      <header>
        <h3>
          {kw.sourceId} · {kw.city} · {kw.job} <StatusBadge status={kw.status} />
        </h3>
        <button type="button" className="link" onClick={props.onClose} aria-label="Close">
          ×
        </button>
      </header>
      {props.isAdmin && (
        <div className="actions" data-testid="keyword-actions">
          <button type="button" disabled={busy} onClick={() => act(doReset)}>
            Reset
          </button>
          {kw.status === "CRAWLING" && (
            <button type="button" disabled={busy} onClick={() => act(doRelease)}>
              Release
            </button>
          )}
          {kw.status === "FAILED" && (
            <button type="button" disabled={busy} onClick={() => act(doRetry)}>
              Retry
            </button>
          )}
          {error && <span className="error">{error.graphQLErrors[0]?.message ?? error.message}</span>}
        </div>
      )}
      <div className="detail-grid">
        <div>
          <h4>History</h4>
          <ol className="timeline">
            {kw.events.map((e) => (
              <li key={e.id}>
                <time>{time(e.at)}</time> <StatusBadge status={e.from} /> → <StatusBadge status={e.to} /> {e.reason}
                {e.crawlerId && <code> {e.crawlerId}</code>}
              </li>
            ))}
            {kw.events.length === 0 && <li>No transitions yet.</li>}
          </ol>
        </div>
        <div>
          <h4>Pages today</h4>
          <table className="compact">
            <thead>
              <tr>
                <th>Page</th>
                <th>Jobs</th>
                <th>Crawler</th>
                <th>At</th>
              </tr>
            </thead>
            <tbody>
              {kw.pageReports.map((p) => (
                <tr key={p.page}>
                  <td className="num">{p.page}</td>
                  <td className="num">{p.jobsFound}</td>
                  <td>{p.crawlerId}</td>
                  <td>{time(p.reportedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {kw.pageReports.length === 0 && <p>No pages reported today.</p>}
        </div>
      </div>
    </aside>
  );
}
