import type { Scenario } from "../lib.ts";
export const fuzz: Scenario = { name: "fuzz", async run() { throw new Error("todo"); } };
