// `npm run chaos [-- --quick] [--only a,b] [--trials N] [--db sqlite|postgres] [--pg-restart cmd] [--out file]`: the
// fault suite. Each scenario breaks something on purpose (kills, locks, slow clients, a fuzzer, bad
// tokens) and checks what survived. Prints a table, writes chaos/results.json, and exits 1 when
// anything did not survive.
import { writeFileSync } from "node:fs";
import { Command, InvalidArgumentError, Option } from "commander";
import { type Provider, progressFor, type Scenario, type ScenarioResult } from "./lib.ts";
import { spiderKill } from "./scenarios/spider-kill.ts";
import { serverKill } from "./scenarios/server-kill.ts";
import { database } from "./scenarios/database.ts";
import { slowClients } from "./scenarios/slow-clients.ts";
import { fuzz } from "./scenarios/fuzz.ts";
import { limits } from "./scenarios/limits.ts";
import { tokens } from "./scenarios/tokens.ts";

const SCENARIOS: Scenario[] = [spiderKill, serverKill, database, slowClients, fuzz, limits, tokens];
const NAMES = SCENARIOS.map((s) => s.name);

const positive = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("must be a positive integer");
  return n;
};
const names = (v: string) => {
  const list = v.split(",").map((s) => s.trim()).filter(Boolean);
  const bad = list.filter((n) => !NAMES.includes(n));
  if (bad.length || !list.length) throw new InvalidArgumentError(`unknown scenario ${bad.join(", ")}; one of ${NAMES.join(", ")}`);
  return list;
};

const program = new Command()
  .name("chaos")
  .description("Fault suite: break things on purpose, report what survived")
  .option("--quick", "few trials of each scenario (a smoke run)", false)
  .option("--only <names>", `comma-separated scenarios: ${NAMES.join(", ")}`, names)
  .option("--trials <n>", "trials of the repeated faults (spider kills, server kills)", positive)
  .addOption(new Option("--db <provider>", "database of the servers under test").choices(["sqlite", "postgres"]).default("sqlite"))
  .option("--pg-restart <command>", "shell command that restarts the PostgreSQL server; the database scenario runs it mid-load (e.g. 'pg_ctlcluster 15 main restart')")
  .option("--out <file>", "where to write the results", new URL("./results.json", import.meta.url).pathname)
  .action(async (opts: { quick: boolean; only?: string[]; trials?: number; db: Provider; pgRestart?: string; out: string }) => {
    const chosen = SCENARIOS.filter((s) => !opts.only || opts.only.includes(s.name));
    const rows: (ScenarioResult & { name: string; survivedAll: boolean; seconds: number; error?: string })[] = [];
    const started = Date.now();
    for (const s of chosen) {
      const t0 = Date.now();
      let r: ScenarioResult;
      let error: string | undefined;
      try {
        r = await s.run({ quick: opts.quick, trials: opts.trials, db: opts.db, pgRestart: opts.pgRestart, progress: progressFor(s.name) });
      } catch (e) {
        error = (e as Error).stack ?? String(e);
        r = { tried: "(the scenario crashed)", survived: "-", checks: 0, failures: [error.split("\n").slice(0, 3).join(" ")], details: {} };
      }
      const row = { name: s.name, ...r, survivedAll: !error && r.failures.length === 0, seconds: (Date.now() - t0) / 1000, error };
      rows.push(row);
      process.stderr.write(`${row.survivedAll ? "ok  " : "FAIL"} ${s.name} (${row.seconds.toFixed(1)} s)\n`);
    }
    printTable(rows);
    for (const r of rows.filter((r) => !r.survivedAll)) {
      console.log(`\n${r.name} did not survive:`);
      for (const f of r.failures) console.log(`  - ${f}`);
    }
    const failed = rows.filter((r) => !r.survivedAll).length;
    console.log(`\n${rows.length - failed}/${rows.length} scenarios survived (${opts.db}${opts.quick ? ", quick" : ""}, ${((Date.now() - started) / 1000).toFixed(0)} s)`);
    writeFileSync(
      opts.out,
      `${JSON.stringify({ at: new Date().toISOString(), db: opts.db, quick: opts.quick, survived: failed === 0, scenarios: rows }, null, 2)}\n`,
    );
    process.exit(failed ? 1 : 0);
  });

function printTable(rows: { name: string; tried: string; survived: string; survivedAll: boolean }[]) {
  const cells = rows.map((r) => [r.name, r.survivedAll ? "yes" : "NO", r.tried, r.survived]);
  const head = ["scenario", "survived", "what it tried", "what survived"];
  console.log(`| ${head.join(" | ")} |`);
  console.log(`|${head.map(() => "---").join("|")}|`);
  for (const c of cells) console.log(`| ${c.map((x) => x.replace(/\|/g, "\\|")).join(" | ")} |`);
}

await program.parseAsync();
