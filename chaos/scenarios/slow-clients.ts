import type { Scenario } from "../lib.ts";
export const slowClients: Scenario = { name: "slow-clients", async run() { throw new Error("todo"); } };
