// The state machine of DESIGN.md as a fixed drawing: where each state sits and which arrows join
// them. Coordinates are a hand-made layout in the SVG's viewBox, not computed geometry.
import type { CrawlStatus, TransitionCountsQuery } from "../gql/graphql.ts";

export const STATES: readonly CrawlStatus[] = ["IDLE", "CRAWLING", "COMPLETED", "FAILED", "PARTIAL"];
export const VIEWBOX = { width: 520, height: 270 };
export const NODE = { width: 112, height: 54 };

/** Centre of each state's box. */
export const NODE_AT: Record<CrawlStatus, { x: number; y: number }> = {
  IDLE: { x: 64, y: 125 },
  CRAWLING: { x: 250, y: 125 },
  COMPLETED: { x: 446, y: 40 },
  FAILED: { x: 446, y: 214 },
  PARTIAL: { x: 250, y: 236 },
};

export interface Arrow {
  from: CrawlStatus;
  to: CrawlStatus;
  label: string;
  /** Line from (x1, y1) to (x2, y2); the label's anchor at (lx, ly). */
  line: [x1: number, y1: number, x2: number, y2: number];
  labelAt: [lx: number, ly: number];
}

/** The transitions DESIGN.md draws. Anything else seen today is listed beside the diagram. */
export const ARROWS: readonly Arrow[] = [
  { from: "IDLE", to: "CRAWLING", label: "claim", line: [120, 125, 192, 125], labelAt: [156, 115] },
  { from: "CRAWLING", to: "COMPLETED", label: "done", line: [306, 108, 388, 56], labelAt: [330, 70] },
  { from: "CRAWLING", to: "FAILED", label: "fail", line: [306, 140, 388, 196], labelAt: [364, 158] },
  { from: "FAILED", to: "CRAWLING", label: "retry", line: [384, 212, 298, 154], labelAt: [352, 210] },
  { from: "CRAWLING", to: "PARTIAL", label: "stale / release", line: [236, 152, 236, 207], labelAt: [230, 184] },
  { from: "PARTIAL", to: "CRAWLING", label: "resume", line: [264, 207, 264, 152], labelAt: [270, 184] },
];

export interface ArrowCounts {
  /** Today's count per drawn arrow, keyed "FROM>TO". */
  drawn: Record<string, number>;
  /** Transitions that have no arrow (reset, rollover, operator retry…), largest first. */
  other: { from: CrawlStatus; to: CrawlStatus; count: number }[];
}

export const arrowKey = (from: CrawlStatus, to: CrawlStatus) => `${from}>${to}`;

export function arrowCounts(counts: TransitionCountsQuery["transitionCounts"]): ArrowCounts {
  const drawn = Object.fromEntries(ARROWS.map((a) => [arrowKey(a.from, a.to), 0]));
  const other: ArrowCounts["other"] = [];
  for (const c of counts) {
    const key = arrowKey(c.from, c.to);
    if (key in drawn) drawn[key] = (drawn[key] ?? 0) + c.count;
    else other.push({ from: c.from, to: c.to, count: c.count });
  }
  other.sort((a, b) => b.count - a.count || arrowKey(a.from, a.to).localeCompare(arrowKey(b.from, b.to)));
  return { drawn, other };
}
