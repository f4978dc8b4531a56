// The schema: each file registers its types, queries and mutations; this only assembles them.
import { lexicographicSortSchema, printSchema } from "graphql";
import { builder } from "./builder.ts";
import "./scalars.ts";
import "./source.ts";
import "./keyword.ts";
import "./crawl.ts";
import "./stats.ts";
import "./import.ts";
import "./collector.ts";
import "./dashboard.ts";
import "./postings.ts";

builder.queryType({ authScopes: { read: true } });
builder.mutationType({});
builder.subscriptionType({ authScopes: { read: true } });

export const schema = builder.toSchema();

/** The committed `schema.graphql`: what codegen and reviewers read. */
export const printedSchema = () => `${printSchema(lexicographicSortSchema(schema))}\n`;
