import { Kind } from "graphql";
import { badInput } from "../errors.ts";
import { builder } from "./builder.ts";

const DAY = /^\d{4}-\d{2}-\d{2}$/;

function parseDay(value: unknown): string {
  if (typeof value === "string" && DAY.test(value) && !Number.isNaN(Date.parse(`${value}T00:00:00Z`))) {
    const round = new Date(`${value}T00:00:00Z`).toISOString().slice(0, 10);
    if (round === value) return value;
  }
  // Built with Yoga's helper so it is the same GraphQLError class Yoga's masking recognises.
  throw badInput(`Date must be a calendar day as YYYY-MM-DD, got ${JSON.stringify(value)}`);
}

builder.scalarType("Date", {
  description: "A calendar day, YYYY-MM-DD (crawl days are in CRAWL_TZ).",
  serialize: (v) => v,
  parseValue: parseDay,
  parseLiteral: (ast) => parseDay(ast.kind === Kind.STRING ? ast.value : undefined),
});

builder.scalarType("DateTime", {
  description: "An instant, ISO-8601 in UTC.",
  serialize: (v) => (v instanceof Date ? v.toISOString() : new Date(v as string).toISOString()),
  parseValue: (v) => {
    const d = new Date(v as string);
    if (typeof v !== "string" || Number.isNaN(d.getTime())) {
      throw badInput("DateTime must be an ISO-8601 string");
    }
    return d;
  },
});
