// The operators' CSV: one "city,job" per line.
import { badInput } from "../errors.ts";

/** Pairs from a CSV of `city,job` lines (quotes allowed around either field). */
export function parseCsv(text: string[]): [string, string][] {
  const unquote = (s: string) => s.trim().replace(/^"(.*)"$/, "$1").replace(/""/g, '"');
  const pairs: [string, string][] = [];
  text.forEach((line, i) => {
    const m = /^("(?:[^"]|"")*"|[^,]*),(.*)$/.exec(line);
    if (!m) throw badInput(`line ${i + 1}: expected "city,job", got ${JSON.stringify(line)}`);
    const pair: [string, string] = [unquote(m[1]!), unquote(m[2]!)];
    if (i === 0 && pair[0].toLowerCase() === "city" && pair[1].toLowerCase() === "job") return;
    pairs.push(pair);
  });
  return pairs;
}
