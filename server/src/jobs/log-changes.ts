import type { Logger } from "pino";

/** Log what a job changed, one line per source and a total; returns the total. */
export function logChanges(log: Logger, job: string, changed: Map<string, number>, what: string): number {
  let total = 0;
  for (const [sourceId, n] of changed) {
    total += n;
    log.info({ job, sourceId, keywords: n }, what);
  }
  log[total ? "info" : "debug"]({ job, keywords: total }, `${job} done`);
  return total;
}
