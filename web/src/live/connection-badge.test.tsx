import { afterEach, describe, expect, it } from "vitest";
import { act, cleanup, render } from "@testing-library/react";
import { ConnectionBadge } from "./connection-badge.tsx";
import { ConnectionStore, OFFLINE_AFTER_FAILURES } from "./connection.ts";

afterEach(cleanup);

describe("ConnectionBadge", () => {
  it("follows the connection: connecting → live → reconnecting → offline → live", () => {
    const store = new ConnectionStore();
    const { getByTestId } = render(<ConnectionBadge store={store} />);
    const badge = () => [getByTestId("connection").dataset.status, getByTestId("connection").textContent];
    expect(badge()).toEqual(["connecting", "connecting…"]);
    act(() => store.dispatch("connected"));
    expect(badge()).toEqual(["live", "live"]);
    act(() => store.dispatch("closed"));
    expect(badge()).toEqual(["reconnecting", "reconnecting…"]);
    act(() => {
      for (let i = 1; i < OFFLINE_AFTER_FAILURES; i++) store.dispatch("closed");
    });
    expect(badge()).toEqual(["offline", "offline"]);
    act(() => store.dispatch("connected"));
    expect(badge()).toEqual(["live", "live"]);
  });
});
