// The dashboard: one live client per token; every section re-reads when a distribution moves
// (the `tick`) or the connection comes back (`connects`).
import { useCallback, useEffect, useReducer, useState } from "react";
import { Provider, useQuery } from "urql";
import { ImportForm } from "./admin/import-form.tsx";
import { TokenForm } from "./admin/token-form.tsx";
import { loadToken, saveToken } from "./auth/token.ts";
import { SourceCharts } from "./charts/source-charts.tsx";
import { CollectorPanel } from "./collector/collector-panel.tsx";
import { Fleet } from "./fleet/fleet.tsx";
import { DashboardDocument } from "./gql/graphql.ts";
import { KeywordsTable } from "./keywords/keywords-table.tsx";
import { createLive, type Live } from "./live/client.ts";
import { ConnectionBadge, useConnection } from "./live/connection-badge.tsx";
import { useRefresh } from "./live/use-refresh.ts";
import { SourceCard } from "./state-machine/source-card.tsx";

export function App() {
  const [token, setToken] = useState(loadToken);
  const [live, setLive] = useState<Live | null>(null);
  useEffect(() => {
    const l = createLive(token);
    setLive(l);
    return () => l.dispose();
  }, [token]);
  const onToken = useCallback((t: string | null) => {
    saveToken(t);
    setToken(t);
  }, []);
  if (!live) return null;
  return (
    <Provider value={live.client}>
      <Dashboard live={live} hasToken={token !== null} onToken={onToken} />
    </Provider>
  );
}

function Dashboard(props: { live: Live; hasToken: boolean; onToken: (t: string | null) => void }) {
  const [result, refetch] = useQuery({ query: DashboardDocument });
  const { connects } = useConnection(props.live.connection);
  useRefresh(connects, () => refetch({ requestPolicy: "network-only" }), 0);
  const [tick, bump] = useReducer((n: number) => n + 1, 0);
  const onChange = useCallback(() => bump(), []);
  const data = result.data;
  const isAdmin = data?.viewer.role === "ADMIN";
  const sources = data?.sources ?? [];
  const dayStart = data ? Date.parse(data.crawlDay.startsAt) : 0;

  return (
    <>
      <header className="top">
        <h1>Crawl control plane</h1>
        <ConnectionBadge store={props.live.connection} />
        <span className="spacer" />
        {data && <span className="day">crawl day {data.crawlDay.date}</span>}
        <a href="/graphql">GraphiQL</a>
        <TokenForm role={data?.viewer.role} hasToken={props.hasToken} onToken={props.onToken} />
      </header>
      <main>
        {result.error && <p className="error card">{result.error.graphQLErrors[0]?.message ?? result.error.message}</p>}
        <section aria-labelledby="machines-title">
          <h2 id="machines-title">State machines</h2>
          <div className="grid">
            {sources.map((s) => (
              <SourceCard key={s.id} source={s} isAdmin={isAdmin} connects={connects} onChange={onChange} />
            ))}
          </div>
        </section>
        {isAdmin && <ImportForm sources={sources} />}
        <section aria-labelledby="charts-title">
          <h2 id="charts-title">Activity</h2>
          <div className="grid">
            {sources.map((s) => (
              <SourceCharts key={s.id} source={s} total={s.keywordCount} dayStart={dayStart} tick={tick} connects={connects} />
            ))}
          </div>
        </section>
        <Fleet tick={tick} connects={connects} />
        <CollectorPanel isAdmin={isAdmin} connects={connects} />
        <KeywordsTable sources={sources} isAdmin={isAdmin} tick={tick} connects={connects} />
      </main>
    </>
  );
}
