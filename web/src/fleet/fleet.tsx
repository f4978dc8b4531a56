// Crawlers seen today: what each holds now, when it was last heard from, and its pace.
import { useQuery } from "urql";
import { CrawlersDocument } from "../gql/graphql.ts";
import { age } from "../keywords/format.ts";
import { useNow } from "../live/use-now.ts";
import { useRefresh } from "../live/use-refresh.ts";

/** A crawler silent this long is shown as quiet. */
const QUIET_AFTER_MS = 60_000;

export function Fleet(props: { tick: number; connects: number }) {
  const [result, refetch] = useQuery({ query: CrawlersDocument });
  useRefresh(props.tick, () => refetch({ requestPolicy: "network-only" }), 2000);
  useRefresh(props.connects, () => refetch({ requestPolicy: "network-only" }), 0);
  const now = useNow();
  const crawlers = result.data?.crawlers ?? [];
  return (
    <section className="card fleet" aria-labelledby="fleet-title">
      <h2 id="fleet-title">Fleet</h2>
      {crawlers.length === 0 ? (
        <p>No crawler seen today.</p>
      ) : (
        <div className="table-scroll">
          <table data-testid="fleet-table">
            <thead>
              <tr>
                <th>Crawler</th>
                <th>Sources</th>
                <th>Holding now</th>
                <th>Last heard</th>
                <th>Pages/min</th>
              </tr>
            </thead>
            <tbody>
              {crawlers.map((c) => (
                <tr key={c.id} data-crawler={c.id} className={now - Date.parse(c.lastHeartbeatAt) > QUIET_AFTER_MS ? "quiet" : undefined}>
                  <td>
                    <code>{c.id}</code>
                  </td>
                  <td>{c.sources.join(", ")}</td>
                  <td>
                    {c.holding.length === 0
                      ? "—"
                      : c.holding.map((k) => (
                          <span key={k.id} className="chip">
                            {k.sourceId} {k.city}·{k.job} p{k.lastCompletedPage}
                            {k.totalPages ? `/${k.totalPages}` : ""}
                          </span>
                        ))}
                  </td>
                  <td>{age(c.lastHeartbeatAt, now)} ago</td>
                  <td className="num">{c.pagesPerMinute.toFixed(1)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
