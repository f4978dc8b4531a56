import { createRequire } from "node:module";
import { defineConfig } from "vitest/config";

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // One graphql instance: Vite would otherwise load graphql's ESM build for our files while the
    // libraries (Pothos, Yoga) load its CommonJS build, and graphql refuses mixed instances.
    alias: [{ find: /^graphql$/, replacement: require.resolve("graphql") }],
  },
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
