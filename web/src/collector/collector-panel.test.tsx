import { afterEach, describe, expect, it, vi } from "vitest";
import { act, cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { type Client, Provider } from "urql";
import { fromValue, makeSubject, never } from "wonka";
import type { CollectorProgressFieldsFragment, CollectorTaskRowFragment } from "../gql/graphql.ts";
import { CollectorPanel } from "./collector-panel.tsx";

afterEach(cleanup);

const progress = (o: Partial<CollectorProgressFieldsFragment> = {}): CollectorProgressFieldsFragment => ({
  taskId: "1",
  status: "IDLE",
  total: 0,
  coveredCount: 0,
  filteredCount: 0,
  producedCount: 0,
  lastError: "",
  lastUpdate: null,
  run: null,
  ...o,
});

const task: CollectorTaskRowFragment = {
  id: "1",
  name: "jobs-feed",
  url: "http://127.0.0.1:4100/upstream",
  enabled: true,
  sink: "DATABASE",
  stream: null,
  batchSize: 100,
  filterDays: 7,
  maxExpiredBatches: 3,
  schedule: null,
  nextRunAt: null,
  progress: progress({ status: "COMPLETED", total: 1000, coveredCount: 1000, filteredCount: 120, producedCount: 120 }),
  runs: [
    {
      id: "4",
      status: "COMPLETED",
      trigger: "manual",
      startedAt: "2026-11-29T10:00:00.000Z",
      finishedAt: "2026-11-29T10:00:05.000Z",
      total: 1000,
      batches: 5,
      fetchedCount: 500,
      filteredCount: 120,
      producedCount: 120,
      duplicateCount: 0,
      error: "",
    },
  ],
};

type Op = { kind: string; variables: Record<string, unknown>; query: { definitions: { name?: { value: string } }[] } };
const opName = (op: Op) => op.query.definitions.find((d) => d.name)?.name?.value;

/** A client with one task; the progress subscription is a subject the test pushes; mutations recorded. */
function fakeClient() {
  const live = makeSubject<CollectorProgressFieldsFragment>();
  const mutations: { name: string | undefined; variables: Record<string, unknown> }[] = [];
  const client = {
    executeQuery: vi.fn((op: Op) => {
      const name = opName(op);
      const data =
        name === "CollectorTasks"
          ? { collectorTasks: [task] }
          : name === "CollectorLag"
            ? { collectorTask: { id: "1", progress: { taskId: "1", lag: { head: 1010, behindHead: 10, sinkMessages: null, sinkPending: null, error: null } } } }
            : null;
      return data ? fromValue({ operation: op, data, stale: false, hasNext: false }) : never;
    }),
    executeSubscription: vi.fn((op: Op) => {
      const { source } = live;
      // wonka: map each pushed progress to an operation result.
      return (sink: Parameters<typeof source>[0]) =>
        source((signal) => {
          if (typeof signal === "number" || signal.tag !== 1) return sink(signal as never);
          sink({ tag: 1, 0: { operation: op, data: { collectorProgress: signal[0] }, stale: false, hasNext: true } } as never);
        });
    }),
    executeMutation: vi.fn((op: Op) => {
      mutations.push({ name: opName(op), variables: op.variables });
      const name = opName(op)!;
      const field = name[0]!.toLowerCase() + name.slice(1);
      return fromValue({ operation: op, data: { [field]: { ...task, name: (op.variables.input as { name?: string })?.name ?? task.name } }, stale: false, hasNext: false });
    }),
  } as unknown as Client;
  return { client, live, mutations };
}

const renderPanel = (client: Client, isAdmin: boolean) =>
  render(
    <Provider value={client}>
      <CollectorPanel isAdmin={isAdmin} connects={0} />
    </Provider>,
  );

const text = (id: string) => screen.getByTestId(id).textContent;

describe("CollectorPanel", () => {
  it("shows a task's coverage, counts, lag and recent runs, and follows the progress subscription", async () => {
    const { client, live } = fakeClient();
    const { container } = renderPanel(client, false);
    await screen.findByText("jobs-feed");
    expect(text("collector-status")).toBe("COMPLETED");
    expect(text("collector-coverage")).toBe("1,000/1,000 offsets covered (100%)");
    expect([text("collector-total"), text("collector-filtered"), text("collector-produced")]).toEqual(["1,000", "120", "120"]);
    expect(text("collector-lag-head")).toBe("10 behind head 1,010");
    const run = [...container.querySelectorAll('tr[data-run="4"] td')].map((td) => td.textContent);
    expect(run.slice(2, 9)).toEqual(["manual", "COMPLETED", "5", "500", "120", "120", "0"]);

    // A new run: the subscription's progress replaces the list's copy, no reload; the run going on
    // heads the recent runs with its live counts.
    const newRun = { ...task.runs[0]!, id: "5", status: "RUNNING" as const, trigger: "schedule", finishedAt: null, batches: 1, fetchedCount: 5, filteredCount: 5, producedCount: 5 };
    act(() => live.next(progress({ status: "RUNNING", total: 1010, coveredCount: 1005, filteredCount: 125, producedCount: 125, run: newRun })));
    expect(text("collector-status")).toBe("RUNNING");
    expect(text("collector-coverage")).toBe("1,005/1,010 offsets covered (99%)");
    expect(text("collector-produced")).toBe("125");
    const rows = () => [...container.querySelectorAll("tr[data-run]")].map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent));
    expect(rows().map((r) => [r[0], r[2], r[3], r[4], r[7]])).toEqual([
      ["5", "schedule", "RUNNING", "1", "5"],
      ["4", "manual", "COMPLETED", "5", "120"],
    ]);
    act(() => live.next(progress({ status: "ERROR", total: 1010, coveredCount: 1005, filteredCount: 125, producedCount: 125, lastError: "batch 1005-1009: HTTP 500" })));
    expect(text("collector-status")).toBe("ERROR");
    expect(text("collector-error")).toBe("batch 1005-1009: HTTP 500");
  });

  it("a viewer sees no buttons and no form", async () => {
    const { client } = fakeClient();
    renderPanel(client, false);
    await screen.findByText("jobs-feed");
    expect(screen.queryAllByRole("button")).toEqual([]);
    expect(screen.queryByTestId("collector-actions")).toBeNull();
    expect(screen.queryByText("New collector task")).toBeNull();
  });

  it("an admin's buttons follow the status: start (optionally after a reset) when not running, stop only while running", async () => {
    const { client, live, mutations } = fakeClient();
    renderPanel(client, true);
    const actions = within(await screen.findByTestId("collector-actions"));
    const button = (name: string) => actions.getByRole("button", { name }) as HTMLButtonElement;
    expect([button("Start").disabled, button("Stop").disabled, button("Reset").disabled]).toEqual([false, true, false]);

    fireEvent.click(actions.getByLabelText("reset first"));
    fireEvent.click(button("Start"));
    await waitFor(() => expect(mutations).toEqual([{ name: "StartCollectorTask", variables: { id: "1", reset: true } }]));

    act(() => live.next(progress({ status: "RUNNING", total: 1000 })));
    await waitFor(() => expect([button("Start").disabled, button("Stop").disabled, button("Reset").disabled]).toEqual([true, false, true]));
    expect((actions.getByLabelText("reset first") as HTMLInputElement).checked).toBe(false);
    fireEvent.click(button("Stop"));
    await waitFor(() => expect(mutations.at(-1)).toEqual({ name: "StopCollectorTask", variables: { id: "1" } }));

    act(() => live.next(progress({ status: "STOPPED", total: 1000, coveredCount: 300 })));
    await waitFor(() => expect(button("Reset").disabled).toBe(false));
    fireEvent.click(button("Reset"));
    await waitFor(() => expect(mutations.at(-1)).toEqual({ name: "ResetCollectorTask", variables: { id: "1" } }));
  });

  it("the create form sends nothing while a field is wrong, then the typed input", async () => {
    const { client, mutations } = fakeClient();
    renderPanel(client, true);
    await screen.findByText("jobs-feed");
    const form = within(screen.getByRole("form", { name: "New collector task" }));
    fireEvent.change(form.getByLabelText("Name"), { target: { value: "feed-2" } });
    fireEvent.change(form.getByLabelText("Upstream URL"), { target: { value: "http://127.0.0.1:4100/upstream" } });
    fireEvent.change(form.getByLabelText("Batch size"), { target: { value: "5000" } });
    fireEvent.click(form.getByRole("button", { name: "Create task" }));
    expect(form.getByTestId("collector-form-error").textContent).toBe("batchSize must be a whole number 1–1000");
    expect(mutations).toEqual([]);

    fireEvent.change(form.getByLabelText("Batch size"), { target: { value: "50" } });
    fireEvent.change(form.getByLabelText("Sink"), { target: { value: "NATS" } });
    fireEvent.change(form.getByLabelText("Schedule (cron, optional)"), { target: { value: "*/10 * * * *" } });
    fireEvent.click(form.getByRole("button", { name: "Create task" }));
    await waitFor(() =>
      expect(mutations).toEqual([
        {
          name: "CreateCollectorTask",
          variables: {
            input: { name: "feed-2", url: "http://127.0.0.1:4100/upstream", batchSize: 50, filterDays: 7, maxExpiredBatches: 3, sink: "NATS", schedule: "*/10 * * * *" },
          },
        },
      ]),
    );
    await form.findByText("created feed-2");
    expect((form.getByLabelText("Name") as HTMLInputElement).value).toBe("");
  });
});
