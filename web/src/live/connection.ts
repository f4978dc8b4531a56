// The dashboard's link to the server as a person sees it: live, reconnecting or offline. A pure
// reducer over graphql-ws client events (tested on its own) and a tiny store React subscribes to.

export type ConnectionStatus = "connecting" | "live" | "reconnecting" | "offline";

export interface ConnectionState {
  status: ConnectionStatus;
  /** Failed attempts since the last successful connection. */
  failures: number;
  /** Successful connections so far; a change after the first means "reconnected: refetch". */
  connects: number;
}

/** "refused": the server turned the token away (close code 4403); retrying cannot help. */
export type ConnectionEvent = "connected" | "closed" | "refused" | "browser-offline" | "browser-online";

/** Failed attempts in a row after which we say "offline" rather than "reconnecting". */
export const OFFLINE_AFTER_FAILURES = 3;

export const initialConnection: ConnectionState = { status: "connecting", failures: 0, connects: 0 };

export function connectionReducer(state: ConnectionState, event: ConnectionEvent): ConnectionState {
  switch (event) {
    case "connected":
      return { status: "live", failures: 0, connects: state.connects + 1 };
    case "closed": {
      // The socket closing while live is one failure too: the next attempt may fail again.
      const failures = state.failures + 1;
      if (state.status === "offline" || failures >= OFFLINE_AFTER_FAILURES) return { ...state, status: "offline", failures };
      return { ...state, status: state.connects === 0 ? "connecting" : "reconnecting", failures };
    }
    case "refused":
    case "browser-offline":
      return { ...state, status: "offline" };
    case "browser-online":
      return state.status === "offline" ? { ...state, status: "reconnecting" } : state;
  }
}

/** Holds the state for React's useSyncExternalStore. */
export class ConnectionStore {
  private state = initialConnection;
  private listeners = new Set<() => void>();

  get = () => this.state;

  subscribe = (listener: () => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  dispatch(event: ConnectionEvent) {
    const next = connectionReducer(this.state, event);
    if (next === this.state) return;
    this.state = next;
    for (const l of this.listeners) l();
  }
}
