import { afterEach, describe, expect, it } from "vitest";
import { cleanup, render } from "@testing-library/react";
import { StateDiagram } from "./state-diagram.tsx";

afterEach(cleanup);

const counts = { idle: 5, crawling: 2, completed: 7, failed: 1, partial: 3 };

describe("StateDiagram", () => {
  it("shows each state's count as the text of its data-source/data-state node", () => {
    const { container } = render(<StateDiagram source="boss" counts={counts} transitions={[]} />);
    const read = (state: string) => container.querySelector(`[data-source="boss"][data-state="${state}"]`)?.textContent;
    expect(["IDLE", "CRAWLING", "COMPLETED", "FAILED", "PARTIAL"].map(read)).toEqual(["5", "2", "7", "1", "3"]);
  });

  it("shows … until the first distribution arrives", () => {
    const { container } = render(<StateDiagram source="qcwy" counts={null} transitions={[]} />);
    expect(container.querySelector('[data-state="IDLE"]')?.textContent).toBe("…");
  });

  it("labels each arrow with today's count and lists transitions without an arrow", () => {
    const { container, getByText } = render(
      <StateDiagram
        source="boss"
        counts={counts}
        transitions={[
          { from: "IDLE", to: "CRAWLING", count: 9 },
          { from: "CRAWLING", to: "PARTIAL", count: 2 },
          { from: "COMPLETED", to: "IDLE", count: 4 },
        ]}
      />,
    );
    const arrow = (from: string, to: string) => container.querySelector(`[data-from="${from}"][data-to="${to}"] .arrow-count`)?.textContent;
    expect([arrow("IDLE", "CRAWLING"), arrow("CRAWLING", "PARTIAL"), arrow("CRAWLING", "FAILED")]).toEqual(["9", "2", "0"]);
    expect(getByText("COMPLETED→IDLE 4")).toBeTruthy();
  });

  it("gives each source its own arrow marker (two diagrams on one page do not share ids)", () => {
    const { container } = render(
      <>
        <StateDiagram source="boss" counts={counts} transitions={[]} />
        <StateDiagram source="qcwy" counts={counts} transitions={[]} />
      </>,
    );
    const ids = [...container.querySelectorAll("marker")].map((m) => m.id);
    expect(new Set(ids).size).toBe(2);
  });
});
