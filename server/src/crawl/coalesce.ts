// Writes that arrive together go to the database together. On PostgreSQL every statement is a
// round trip, a commit (a WAL flush) and a wake-up of a backend — for a page report that is most of
// its cost, server and database side. Requests that arrive in the same turn of the event loop
// (the HTTP requests read from the sockets in one poll) are written by ONE statement, each item
// answered on its own, as if it had been written alone. DataLoader does the collecting; the turn
// ends at setImmediate, after the poll phase, so a lone request waits no timer.
import DataLoader from "dataloader";

/** Most items written by one statement; more in one turn make several statements. */
export const COALESCE_MAX = 64;

/**
 * `write` receives the items of one turn, in arrival order, and answers each: `out[i]` for
 * `items[i]` (an Error rejects that item only). If `write` throws, every item of the turn rejects.
 */
export function coalesce<I, O>(write: (items: readonly I[]) => Promise<(O | Error)[]>, max = COALESCE_MAX): (item: I) => Promise<O> {
  const loader = new DataLoader<I, O>(write, { cache: false, maxBatchSize: max, batchScheduleFn: (run) => setImmediate(run) });
  return (item) => loader.load(item);
}
