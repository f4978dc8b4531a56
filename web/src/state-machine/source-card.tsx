// A source's live card: the distribution subscription drives the diagram's counts; today's
// transition counts are re-read (throttled) whenever the distribution moves.
import { useEffect } from "react";
import { useQuery, useSubscription } from "urql";
import { DistributionDocument, type SourceSettingsFragment, TransitionCountsDocument } from "../gql/graphql.ts";
import { useRefresh } from "../live/use-refresh.ts";
import { SourceSettingsForm } from "../admin/source-settings.tsx";
import { StateDiagram } from "./state-diagram.tsx";

export function SourceCard(props: { source: SourceSettingsFragment; isAdmin: boolean; connects: number; onChange: () => void }) {
  const { source } = props;
  const [dist] = useSubscription({ query: DistributionDocument, variables: { source: source.id } });
  const stats = dist.data?.crawlStatusDistribution ?? null;
  const [transitions, refetch] = useQuery({ query: TransitionCountsDocument, variables: { source: source.id } });
  useRefresh(stats, () => refetch({ requestPolicy: "network-only" }), 500);
  useRefresh(props.connects, () => refetch({ requestPolicy: "network-only" }), 0);
  const { onChange } = props;
  useEffect(() => {
    if (stats) onChange();
  }, [stats, onChange]);

  return (
    <article className="card source-card" data-source-card={source.id}>
      <header>
        <h3>
          {source.name} <code>{source.id}</code>
          {!source.enabled && <span className="badge state-failed">disabled</span>}
        </h3>
        {stats && (
          <p className="summary">
            {stats.used}/{stats.total} keywords used · {stats.pagesCrawled} pages · {stats.jobsFound} jobs · {stats.date}
          </p>
        )}
      </header>
      <StateDiagram source={source.id} counts={stats?.byStatus ?? null} transitions={transitions.data?.transitionCounts ?? []} />
      <p className="settings-line">
        maxPages {source.maxPages} · maxRetries {source.maxRetries} · stale after {source.staleAfterSeconds}s
      </p>
      {props.isAdmin && <SourceSettingsForm source={source} />}
    </article>
  );
}
