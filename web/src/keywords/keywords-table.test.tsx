import { afterEach, describe, expect, it, vi } from "vitest";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { type Client, Provider } from "urql";
import { fromValue, never } from "wonka";
import type { KeywordRowFragment, KeywordsQueryVariables } from "../gql/graphql.ts";
import { KeywordsTable, PAGE_SIZE } from "./keywords-table.tsx";

afterEach(cleanup);

const sources = [
  { id: "boss", name: "Boss", maxPages: 3, maxRetries: 3, staleAfterSeconds: 1800, enabled: true, keywordCount: 60 },
  { id: "qcwy", name: "51job", maxPages: 50, maxRetries: 3, staleAfterSeconds: 1800, enabled: true, keywordCount: 0 },
];

const row = (i: number): KeywordRowFragment => ({
  id: String(i),
  sourceId: "boss",
  city: `city${i}`,
  job: "java",
  status: i === 1 ? "FAILED" : "IDLE",
  lastCompletedPage: i === 1 ? 2 : 0,
  totalPages: 0,
  jobsFound: i === 1 ? 30 : 0,
  crawlerId: i === 1 ? "spider-1" : "",
  heartbeatAt: null,
  retryCount: i === 1 ? 3 : 0,
  errorMessage: i === 1 ? "banned" : "",
  source: { id: "boss", maxPages: 3 },
});

/** A client serving 60 keywords a page at a time, cursor = last id; records each query's variables. */
function fakeClient() {
  const asked: KeywordsQueryVariables[] = [];
  const client = {
    executeQuery: vi.fn((op: { variables: KeywordsQueryVariables; query: unknown }) => {
      const v = op.variables;
      if (!("first" in v)) return never; // the detail panel is not under test here
      asked.push(v);
      const start = v.after ? Number(v.after) + 1 : 1;
      const total = v.status === "FAILED" ? 1 : 60;
      const ids = v.status === "FAILED" ? [1] : Array.from({ length: Math.max(0, Math.min(PAGE_SIZE, total - start + 1)) }, (_, i) => start + i);
      const data = {
        keywords: {
          totalCount: total,
          pageInfo: { hasNextPage: (ids.at(-1) ?? total) < total, endCursor: ids.length ? String(ids.at(-1)) : null },
          edges: ids.map((i) => ({ node: row(i) })),
        },
      };
      return fromValue({ operation: op, data, stale: false, hasNext: false });
    }),
  } as unknown as Client;
  return { client, asked };
}

const renderTable = (client: Client) =>
  render(
    <Provider value={client}>
      <KeywordsTable sources={sources} isAdmin={false} tick={0} connects={0} />
    </Provider>,
  );

describe("KeywordsTable", () => {
  it("shows a row per keyword with status, progress, jobs, crawler, retries and error", async () => {
    const { client } = fakeClient();
    const { container } = renderTable(client);
    await screen.findByText("60 keywords");
    const first = container.querySelector('tr[data-keyword-id="1"]')!;
    const cells = [...first.querySelectorAll("td")].map((td) => td.textContent);
    expect(cells).toEqual(["boss", "city1", "java", "FAILED", " 2/3", "30", "spider-1", "—", "3", "banned"]);
    expect(container.querySelectorAll("tbody tr")).toHaveLength(PAGE_SIZE);
    expect(screen.getByText("page 1 of 3")).toBeTruthy();
  });

  it("pages forward with the end cursor and back to the previous page", async () => {
    const { client, asked } = fakeClient();
    const { container } = renderTable(client);
    await screen.findByText("page 1 of 3");
    fireEvent.click(screen.getByText("Next →"));
    await screen.findByText("page 2 of 3");
    expect(asked.at(-1)).toMatchObject({ after: String(PAGE_SIZE), first: PAGE_SIZE });
    expect(container.querySelector("tbody tr")?.getAttribute("data-keyword-id")).toBe(String(PAGE_SIZE + 1));
    fireEvent.click(screen.getByText("Next →"));
    await screen.findByText("page 3 of 3");
    expect((screen.getByText("Next →") as HTMLButtonElement).disabled).toBe(true);
    fireEvent.click(screen.getByText("← Previous"));
    await screen.findByText("page 2 of 3");
    expect(asked.at(-1)).toMatchObject({ after: String(PAGE_SIZE) });
  });

  it("a filter goes back to the first page and is sent to the server; search waits for typing to pause", async () => {
    const { client, asked } = fakeClient();
    renderTable(client);
    await screen.findByText("page 1 of 3");
    fireEvent.click(screen.getByText("Next →"));
    await screen.findByText("page 2 of 3");
    fireEvent.change(screen.getByLabelText("Status"), { target: { value: "FAILED" } });
    await screen.findByText("1 keywords");
    expect(asked.at(-1)).toMatchObject({ status: "FAILED", after: null, source: null, search: null });
    fireEvent.change(screen.getByLabelText("Source"), { target: { value: "boss" } });
    await waitFor(() => expect(asked.at(-1)).toMatchObject({ source: "boss", status: "FAILED" }));
    fireEvent.change(screen.getByLabelText("Search"), { target: { value: "c" } });
    fireEvent.change(screen.getByLabelText("Search"), { target: { value: "city1 " } });
    await waitFor(() => expect(asked.at(-1)).toMatchObject({ search: "city1" }));
    expect(asked.filter((v) => v.search === "c")).toEqual([]);
  });
});
