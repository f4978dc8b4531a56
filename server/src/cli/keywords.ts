// npm run keywords -- import --source S <file.csv>           (lines "city,job"; a header line is skipped)
// npm run keywords -- import --source S --cities a.txt --jobs b.txt   (one per line; every city × job)
// Same code path as the importKeywords mutation; prints created/existing counts.
import { readFileSync } from "node:fs";
import { Command } from "commander";
import { crossProduct, importKeywords, MAX_IMPORT_PAIRS } from "../keywords/import.ts";
import { parseCsv } from "../keywords/csv.ts";
import { fail, openCliDatabase } from "./shared.ts";

const lines = (path: string) =>
  readFileSync(path, "utf8")
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));

const program = new Command("keywords").description("Operate on keywords.");

program
  .command("import")
  .description("add keywords to a source (idempotent: existing ones are counted, not duplicated)")
  .requiredOption("--source <id>", "source id, e.g. boss, qcwy, zhilian")
  .option("--cities <file>", "file with one city per line (with --jobs: every city × job)")
  .option("--jobs <file>", "file with one job per line")
  .argument("[csv]", "CSV file of city,job lines")
  .action(async (csv: string | undefined, opts: { source: string; cities?: string; jobs?: string }) => {
    let pairs: [string, string][];
    try {
      if (csv && !opts.cities && !opts.jobs) pairs = parseCsv(lines(csv));
      else if (!csv && opts.cities && opts.jobs) pairs = crossProduct(lines(opts.cities), lines(opts.jobs));
      else throw new Error("give either a CSV file, or both --cities and --jobs");
    } catch (e) {
      fail(e);
    }
    const db = await openCliDatabase();
    try {
      let created = 0;
      let existing = 0;
      for (let i = 0; i < pairs.length; i += MAX_IMPORT_PAIRS) {
        const r = await importKeywords(db, opts.source, pairs.slice(i, i + MAX_IMPORT_PAIRS));
        created += r.created;
        existing += r.existing;
        if (pairs.length > MAX_IMPORT_PAIRS) console.error(`… ${Math.min(i + MAX_IMPORT_PAIRS, pairs.length)}/${pairs.length}`);
      }
      console.log(JSON.stringify({ source: opts.source, created, existing }));
    } catch (e) {
      fail(e);
    } finally {
      await db.close();
    }
  });

await program.parseAsync();
