import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["server/**/*.test.ts", "spiders/**/*.test.ts", "web/**/*.test.{ts,tsx}", "bench/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests each boot a server on their own database file; run files in parallel
    // processes but keep each file's tests in order.
    pool: "forks",
    sequence: { concurrent: false },
  },
});
