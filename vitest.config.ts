import { createRequire } from "node:module";
import { defineConfig } from "vitest/config";
import react from "@vitejs/plugin-react";

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // One graphql instance: Vite would otherwise load graphql's ESM build for our files while the
    // libraries (Pothos, Yoga) load its CommonJS build, and graphql refuses mixed instances.
    alias: [{ find: /^graphql$/, replacement: require.resolve("graphql") }],
  },
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests each boot a server on their own database file; run files in parallel
    // processes but keep each file's tests in order.
    pool: "forks",
    sequence: { concurrent: false },
    projects: [
      {
        extends: true,
        test: {
          name: "node",
          environment: "node",
          // web/e2e: the real browser against the real server, driven from Node.
          include: ["server/**/*.test.ts", "spiders/**/*.test.ts", "bench/**/*.test.ts", "chaos/**/*.test.ts", "web/e2e/**/*.test.ts"],
        },
      },
      {
        extends: true,
        plugins: [react()],
        test: { name: "web", environment: "happy-dom", include: ["web/src/**/*.test.{ts,tsx}"] },
      },
    ],
  },
});
