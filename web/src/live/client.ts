// One urql client per token: queries and mutations over HTTP, subscriptions over graphql-ws on the
// same /graphql path. The WebSocket connects at once and retries for ever, so the connection badge
// is true and subscriptions resume by themselves after a server restart.
import { cacheExchange, Client, fetchExchange, subscriptionExchange } from "urql";
import { createClient as createWsClient } from "graphql-ws";
import { authHeaders } from "../auth/token.ts";
import { ConnectionStore } from "./connection.ts";

/** Longest wait between reconnection attempts. */
const MAX_RETRY_WAIT_MS = 2_000;
/** graphql-ws close code for a connection the server refuses (bad token, or reads need one). */
const FORBIDDEN = 4403;
const closeCode = (e: unknown) => (typeof e === "object" && e !== null && "code" in e ? (e as { code: unknown }).code : null);

/** Ping interval: a server that vanished without closing the socket is noticed this fast. */
const KEEP_ALIVE_MS = 5_000;

export interface Live {
  client: Client;
  connection: ConnectionStore;
  dispose(): void;
}

export function createLive(token: string | null, location: Pick<Location, "protocol" | "host"> = window.location): Live {
  const connection = new ConnectionStore();
  const ws = createWsClient({
    url: `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/graphql`,
    connectionParams: () => authHeaders(token),
    lazy: false,
    keepAlive: KEEP_ALIVE_MS,
    retryAttempts: Infinity,
    // Retry through restarts and network loss, not a refusal: signing in makes a new client.
    shouldRetry: (e) => closeCode(e) !== FORBIDDEN,
    retryWait: (retries) => new Promise((r) => setTimeout(r, Math.min(250 * 2 ** retries, MAX_RETRY_WAIT_MS))),
    onNonLazyError: () => {}, // never reached with infinite retries; the badge shows the state
    on: {
      connected: () => connection.dispatch("connected"),
      closed: (e) => connection.dispatch(closeCode(e) === FORBIDDEN ? "refused" : "closed"),
    },
  });
  const online = () => connection.dispatch("browser-online");
  const offline = () => connection.dispatch("browser-offline");
  window.addEventListener("online", online);
  window.addEventListener("offline", offline);

  const client = new Client({
    url: "/graphql",
    preferGetMethod: false,
    requestPolicy: "cache-and-network",
    // The server's CSRF guard wants a non-simple header on every request.
    fetchOptions: () => ({ headers: { "x-graphql-yoga-csrf": "1", ...authHeaders(token) } }),
    exchanges: [
      cacheExchange,
      fetchExchange,
      subscriptionExchange({
        forwardSubscription(request) {
          const input = { ...request, query: request.query || "" };
          return { subscribe: (sink) => ({ unsubscribe: ws.subscribe(input, sink) }) };
        },
      }),
    ],
  });

  return {
    client,
    connection,
    dispose() {
      window.removeEventListener("online", online);
      window.removeEventListener("offline", offline);
      void ws.dispose();
    },
  };
}
