// One source's state machine: five states with their live counts, arrows with today's transitions.
// Each count carries data-source / data-state so a person or a test can read it.
import type { CrawlStatus, DistributionSubscription } from "../gql/graphql.ts";
import { ARROWS, arrowCounts, arrowKey, NODE, NODE_AT, STATES, VIEWBOX } from "./layout.ts";
import type { TransitionCountsQuery } from "../gql/graphql.ts";

type Counts = DistributionSubscription["crawlStatusDistribution"]["byStatus"];

const COUNT_KEY: Record<CrawlStatus, keyof Counts> = {
  IDLE: "idle",
  CRAWLING: "crawling",
  COMPLETED: "completed",
  FAILED: "failed",
  PARTIAL: "partial",
};

export function StateDiagram(props: {
  source: string;
  counts: Counts | null;
  transitions: TransitionCountsQuery["transitionCounts"];
}) {
  const { drawn, other } = arrowCounts(props.transitions);
  const markerId = `arrow-${props.source}`;
  return (
    <figure className="diagram">
      <svg viewBox={`0 0 ${VIEWBOX.width} ${VIEWBOX.height}`} role="img" aria-label={`${props.source} state machine`}>
        <defs>
          <marker id={markerId} viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M0,0 L10,5 L0,10 z" className="arrow-head" />
          </marker>
        </defs>
        {ARROWS.map((a) => {
          const [x1, y1, x2, y2] = a.line;
          const [lx, ly] = a.labelAt;
          const vertical = x1 === x2;
          return (
            <g key={arrowKey(a.from, a.to)} className="arrow">
              <line x1={x1} y1={y1} x2={x2} y2={y2} markerEnd={`url(#${markerId})`} />
              <text
                x={lx}
                y={ly}
                textAnchor={vertical ? (lx < x1 ? "end" : "start") : "middle"}
                data-source={props.source}
                data-from={a.from}
                data-to={a.to}
              >
                {a.label} <tspan className="arrow-count">{drawn[arrowKey(a.from, a.to)]}</tspan>
              </text>
            </g>
          );
        })}
        {STATES.map((s) => {
          const { x, y } = NODE_AT[s];
          return (
            <g key={s} className={`node state-${s.toLowerCase()}`}>
              <rect x={x - NODE.width / 2} y={y - NODE.height / 2} width={NODE.width} height={NODE.height} rx="8" />
              <text x={x} y={y - 7} textAnchor="middle" className="node-label">
                {s}
              </text>
              <text x={x} y={y + 16} textAnchor="middle" className="node-count" data-source={props.source} data-state={s}>
                {props.counts ? props.counts[COUNT_KEY[s]] : "…"}
              </text>
            </g>
          );
        })}
      </svg>
      <figcaption>
        Arrows: transitions today. Next crawl day: every state → IDLE.
        {other.length > 0 && (
          <span className="other-transitions">
            {" "}
            Also today:{" "}
            {other.map((o) => (
              <span key={arrowKey(o.from, o.to)} className="chip">
                {o.from}→{o.to} {o.count}
              </span>
            ))}
          </span>
        )}
      </figcaption>
    </figure>
  );
}
