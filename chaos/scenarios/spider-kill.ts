import type { Scenario } from "../lib.ts";
export const spiderKill: Scenario = { name: "spider-kill", async run() { throw new Error("todo"); } };
