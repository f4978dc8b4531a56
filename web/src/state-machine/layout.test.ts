import { describe, expect, it } from "vitest";
import { ARROWS, arrowCounts, NODE, NODE_AT, STATES, VIEWBOX } from "./layout.ts";

describe("state machine layout", () => {
  it("draws DESIGN.md's transitions between the five states", () => {
    expect(ARROWS.map((a) => `${a.from}>${a.to}`).sort()).toEqual(
      ["IDLE>CRAWLING", "CRAWLING>COMPLETED", "CRAWLING>FAILED", "FAILED>CRAWLING", "CRAWLING>PARTIAL", "PARTIAL>CRAWLING"].sort(),
    );
    expect(Object.keys(NODE_AT).sort()).toEqual([...STATES].sort());
  });

  it("keeps every box inside the drawing and apart from the others", () => {
    const boxes = STATES.map((s) => ({ s, ...NODE_AT[s] }));
    for (const b of boxes) {
      expect(b.x - NODE.width / 2).toBeGreaterThanOrEqual(0);
      expect(b.x + NODE.width / 2).toBeLessThanOrEqual(VIEWBOX.width);
      expect(b.y - NODE.height / 2).toBeGreaterThanOrEqual(0);
      expect(b.y + NODE.height / 2).toBeLessThanOrEqual(VIEWBOX.height);
    }
    for (const a of boxes)
      for (const b of boxes)
        if (a.s < b.s) expect(Math.abs(a.x - b.x) >= NODE.width || Math.abs(a.y - b.y) >= NODE.height).toBe(true);
  });
});

describe("arrowCounts", () => {
  it("puts today's counts on their arrows (0 where none) and lists the rest", () => {
    const r = arrowCounts([
      { from: "IDLE", to: "CRAWLING", count: 7 },
      { from: "CRAWLING", to: "COMPLETED", count: 4 },
      { from: "FAILED", to: "PARTIAL", count: 1 },
      { from: "COMPLETED", to: "IDLE", count: 2 },
    ]);
    expect(r.drawn).toEqual({
      "IDLE>CRAWLING": 7,
      "CRAWLING>COMPLETED": 4,
      "CRAWLING>FAILED": 0,
      "FAILED>CRAWLING": 0,
      "CRAWLING>PARTIAL": 0,
      "PARTIAL>CRAWLING": 0,
    });
    expect(r.other).toEqual([
      { from: "COMPLETED", to: "IDLE", count: 2 },
      { from: "FAILED", to: "PARTIAL", count: 1 },
    ]);
  });
});
