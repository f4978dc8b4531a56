// SQLite WAL checkpoints off the event loop (see SqliteCheckpointer in client.ts). Plain JavaScript:
// a worker thread loads this file with Node's own loader, under tsx, vitest or plain node alike.
//
// A checkpoint copies the WAL's pages into the database file and syncs both: tens of milliseconds
// once the WAL holds thousands of pages. Run by a commit (SQLite's autocheckpoint), that time stops
// every request the process serves. Here it runs on a connection of its own in another thread:
// - PASSIVE checkpoints copy what is committed, beside the writer, never blocking it;
// - once the WAL is long and nearly all copied, a RESTART checkpoint copies the rest while it holds
//   the write lock — for a few milliseconds, with the writer told to wait its turn (`turn`), which
//   it does without blocking the event loop — and lets the next commit write the WAL from its
//   start again. Without it the WAL would never be reused while writes keep coming, and would grow
//   without bound. If the writer outpaces the copying, the RESTART comes at twice the length and
//   the writer waits for it.
import { parentPort, workerData } from "node:worker_threads";
import { setTimeout as sleep } from "node:timers/promises";
import BetterSqlite3 from "better-sqlite3";

const { path, idleMs, copyPages, restartPages, restartLeft, restartWaitMs, turn } = workerData;
// turn[0] = 1 while a RESTART wants the write lock: the writer starts no transaction meanwhile
// (SQLite's locks are not fair: a writer that commits back to back would otherwise always win).
const wants = new Int32Array(turn);
const conn = new BetterSqlite3(path, { timeout: restartWaitMs });
conn.pragma("wal_autocheckpoint = 0");
let stopping = false;
parentPort.on("message", (m) => {
  if (m === "stop") stopping = true;
});

/** One checkpoint: { busy, log (WAL pages), checkpointed (of them, in the database file) }, and how long it took. */
function checkpoint(mode) {
  const t0 = performance.now();
  const [r] = conn.pragma(`wal_checkpoint(${mode})`);
  return { ...r, ms: performance.now() - t0 };
}

// An error (an I/O error, say) ends the thread: the writer then checkpoints on commit again.
while (!stopping) {
  let r = checkpoint("PASSIVE");
  let restarted = false;
  // Restart once nearly all is copied; or, if the writer outpaces the copying, once the WAL is twice
  // as long: the writer then waits for the rest to be copied (backpressure, off the event loop).
  if (!r.busy && r.log >= restartPages && (r.log - r.checkpointed < restartLeft || r.log >= 2 * restartPages)) {
    Atomics.store(wants, 0, 1);
    try {
      r = checkpoint("RESTART");
    } finally {
      Atomics.store(wants, 0, 0);
    }
    restarted = !r.busy;
  }
  parentPort.postMessage({ walPages: r.log, ms: r.ms, restarted });
  // Go again at once while much is left to copy; else rest.
  if (r.busy || r.log - r.checkpointed < copyPages) await sleep(idleMs);
}
conn.close();
parentPort.close(); // the listener above would keep the thread alive
