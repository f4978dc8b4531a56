import type { Scenario } from "../lib.ts";
export const database: Scenario = { name: "database", async run() { throw new Error("todo"); } };
