import { describe, expect, it } from "vitest";
import { type ConnectionEvent, connectionReducer, ConnectionStore, initialConnection, OFFLINE_AFTER_FAILURES } from "./connection.ts";

const run = (...events: ConnectionEvent[]) => events.reduce(connectionReducer, initialConnection);

describe("connectionReducer", () => {
  it("connecting → live on the first connection", () => {
    expect(run()).toMatchObject({ status: "connecting", connects: 0 });
    expect(run("connected")).toEqual({ status: "live", failures: 0, connects: 1 });
  });

  it("a live socket that closes is reconnecting, then live again with one more connect", () => {
    expect(run("connected", "closed")).toMatchObject({ status: "reconnecting", failures: 1, connects: 1 });
    expect(run("connected", "closed", "closed", "connected")).toEqual({ status: "live", failures: 0, connects: 2 });
  });

  it(`says offline after ${OFFLINE_AFTER_FAILURES} failed attempts in a row, and live once one succeeds`, () => {
    const closes = Array<ConnectionEvent>(OFFLINE_AFTER_FAILURES).fill("closed");
    expect(run("connected", ...closes.slice(1)).status).toBe("reconnecting");
    expect(run("connected", ...closes).status).toBe("offline");
    expect(run("connected", ...closes, "closed", "connected").status).toBe("live");
  });

  it("before the first connection, failures read as connecting until offline", () => {
    expect(run("closed").status).toBe("connecting");
    expect(run(...Array<ConnectionEvent>(OFFLINE_AFTER_FAILURES).fill("closed")).status).toBe("offline");
  });

  it("a refused token says offline at once", () => {
    expect(run("refused").status).toBe("offline");
  });

  it("the browser going offline says offline at once; back online it reconnects", () => {
    expect(run("connected", "browser-offline").status).toBe("offline");
    expect(run("connected", "browser-offline", "browser-online").status).toBe("reconnecting");
    const live = run("connected");
    expect(connectionReducer(live, "browser-online")).toBe(live);
  });
});

describe("ConnectionStore", () => {
  it("notifies listeners on a change only", () => {
    const store = new ConnectionStore();
    let calls = 0;
    const off = store.subscribe(() => calls++);
    store.dispatch("connected");
    store.dispatch("browser-online"); // no change
    expect([calls, store.get().status]).toEqual([1, "live"]);
    off();
    store.dispatch("closed");
    expect(calls).toBe(1);
  });
});
