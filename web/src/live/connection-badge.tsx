import { useSyncExternalStore } from "react";
import type { ConnectionStore } from "./connection.ts";

const TEXT = { connecting: "connecting…", live: "live", reconnecting: "reconnecting…", offline: "offline" } as const;

export function useConnection(store: ConnectionStore) {
  return useSyncExternalStore(store.subscribe, store.get);
}

export function ConnectionBadge({ store }: { store: ConnectionStore }) {
  const { status } = useConnection(store);
  return (
    <span className={`connection connection-${status}`} data-testid="connection" data-status={status} role="status">
      {TEXT[status]}
    </span>
  );
}
