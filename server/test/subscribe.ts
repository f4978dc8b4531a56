// A graphql-ws subscription in a test: its messages and errors as they arrive, and a wait for a condition.
import type { Client } from "graphql-ws";

export const DISTRIBUTION = `subscription($s: ID!) { crawlStatusDistribution(source: $s) {
  total used jobsFound pagesCrawled byStatus { idle crawling completed failed partial } } }`;

/** Collects a subscription's messages; `next(n)` waits until n have arrived. */
export function collect(client: Client, query: string, variables: Record<string, unknown>) {
  const messages: any[] = [];
  const errors: unknown[] = [];
  let wake: () => void = () => {};
  const stop = client.subscribe(
    { query, variables },
    {
      next: (m) => {
        if (m.errors) errors.push(...m.errors);
        else messages.push(m.data);
        wake();
      },
      error: (e) => {
        errors.push(e);
        wake();
      },
      complete: () => wake(),
    },
  );
  return {
    messages,
    errors,
    stop,
    async until(pred: () => boolean, ms = 5000) {
      const end = Date.now() + ms;
      while (!pred()) {
        if (Date.now() > end) throw new Error(`subscription: condition not met; got ${JSON.stringify(messages.at(-1))} ${JSON.stringify(errors)}`);
        await new Promise<void>((r) => {
          wake = r;
          setTimeout(r, 50);
        });
      }
    },
  };
}
