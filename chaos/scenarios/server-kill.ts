import type { Scenario } from "../lib.ts";
export const serverKill: Scenario = { name: "server-kill", async run() { throw new Error("todo"); } };
