// The spider's cycle: claim → reportPageProgress (each page; also the heartbeat) → reportCrawlComplete,
// or releaseKeyword on a graceful stop. Every operation goes through the crawl store.
import { z } from "zod";
import type { BatchResult, Claim } from "../crawl/store.ts";
import { CrawlStatus } from "../crawl/rules.ts";
import { builder } from "./builder.ts";
import { CrawlStatusEnum, KeywordRef } from "./keyword.ts";
import { crawlerId, errorMessage, idInt, leaseToken, parseInput, sourceId } from "./validate.ts";

/** Keywords one claim may take. */
export const MAX_CLAIM_LIMIT = 100;

const ClaimRef = builder.objectRef<Claim>("Claim").implement({
  description: "A keyword leased to one crawler. Present leaseToken with every report.",
  fields: (t) => ({
    keyword: t.field({ type: KeywordRef, resolve: (c) => c.keyword }),
    startPage: t.exposeInt("startPage", { description: "First page to fetch: lastCompletedPage + 1." }),
    leaseToken: t.exposeString("leaseToken"),
    resumed: t.exposeBoolean("resumed", { description: "true when the crawl continues past page 1." }),
  }),
});

const ReportPageProgressInput = builder.inputType("ReportPageProgressInput", {
  fields: (t) => ({
    keywordId: t.id({ required: true }),
    leaseToken: t.string({ required: true }),
    page: t.int({ required: true, description: "The page just crawled (1-based)." }),
    totalPages: t.int({ description: "Pages the site says it has, if known (0 or omitted = unknown)." }),
    jobsFound: t.int({ required: true, description: "Postings found on this page." }),
  }),
});

const ReportCrawlCompleteInput = builder.inputType("ReportCrawlCompleteInput", {
  fields: (t) => ({
    keywordId: t.id({ required: true }),
    leaseToken: t.string({ required: true }),
    status: t.field({ type: CrawlStatusEnum, required: true, description: "COMPLETED or FAILED." }),
    errorMessage: t.string({ description: "Why it failed (FAILED only), at most 2000 characters." }),
  }),
});

const ItemErrorRef = builder.objectRef<{ code: string; message: string }>("ItemError").implement({
  description: "Why one item of a batch was refused; the same codes as a single operation's extensions.code.",
  fields: (t) => ({ code: t.exposeString("code"), message: t.exposeString("message") }),
});

const KeywordResultRef = builder.objectRef<BatchResult>("KeywordResult").implement({
  description: "One item of a batch, in input order: the keyword after the event, or the error that refused it (nothing written for it).",
  fields: (t) => ({
    keywordId: t.id({ resolve: (r) => String(r.keywordId) }),
    keyword: t.field({ type: KeywordRef, nullable: true, resolve: (r) => r.keyword ?? null }),
    error: t.field({ type: ItemErrorRef, nullable: true, resolve: (r) => r.error ?? null }),
  }),
});

/** Items one batch mutation may carry. */
export const MAX_BATCH = 100;

// Schemas are built once: zod compiles each on first use, too costly per request.
const claimArgs = z.object({ source: sourceId, crawlerId, limit: z.number().int().min(1).max(MAX_CLAIM_LIMIT) });
const leaseArgs = z.object({ keywordId: idInt, leaseToken });
// Range checks that depend on the source (page ≤ maxPages, …) are the state machine's (rules.ts).
const progressArgs = leaseArgs.extend({
  page: z.number().int(),
  totalPages: z.number().int().nullish(),
  jobsFound: z.number().int(),
});
const completeArgs = leaseArgs.extend({
  status: z.enum([CrawlStatus.COMPLETED, CrawlStatus.FAILED], { error: "status must be COMPLETED or FAILED" }),
  errorMessage: errorMessage.nullish(),
});

const batchOf = <S extends z.ZodType>(item: S) => z.object({ inputs: z.array(item).min(1).max(MAX_BATCH) });
const progressBatch = batchOf(progressArgs);
const completeBatch = batchOf(completeArgs);

builder.mutationFields((t) => ({
  reportPagesProgress: t.field({
    type: [KeywordResultRef],
    authScopes: { spider: true },
    description: `reportPageProgress for up to ${MAX_BATCH} pages (of one or several keywords) in one transaction. Results in input order; a refused item (LEASE_LOST, INVALID_TRANSITION, …) changes nothing, the others commit. Bad input refuses the whole batch.`,
    args: { inputs: t.arg({ type: [ReportPageProgressInput], required: true }) },
    resolve: (_root, args, ctx) => ctx.store.reportPagesProgress(parseInput(progressBatch, args).inputs),
  }),

  reportCrawlsComplete: t.field({
    type: [KeywordResultRef],
    authScopes: { spider: true },
    description: `reportCrawlComplete for up to ${MAX_BATCH} keywords in one transaction. Results in input order; a refused item changes nothing, the others commit. Bad input refuses the whole batch.`,
    args: { inputs: t.arg({ type: [ReportCrawlCompleteInput], required: true }) },
    resolve: (_root, args, ctx) => ctx.store.completeMany(parseInput(completeBatch, args).inputs),
  }),

  claimKeywords: t.field({
    type: [ClaimRef],
    authScopes: { spider: true },
    description:
      "Lease up to `limit` keywords of a source: PARTIAL first (resume), then FAILED with retries left, then fresh ones, least recently requested first. Empty when nothing is left.",
    args: {
      source: t.arg.id({ required: true }),
      crawlerId: t.arg.string({ required: true }),
      limit: t.arg.int({ defaultValue: 1 }),
    },
    resolve: (_root, args, ctx) => {
      const a = parseInput(claimArgs, { ...args, limit: args.limit ?? 1 });
      return ctx.store.claim(a.source, a.crawlerId, a.limit);
    },
  }),

  reportPageProgress: t.field({
    type: KeywordRef,
    authScopes: { spider: true },
    description: "Record one crawled page (idempotent per page; also the heartbeat). The last page completes the keyword.",
    args: { input: t.arg({ type: ReportPageProgressInput, required: true }) },
    resolve: (_root, { input }, ctx) => ctx.store.reportPageProgress(parseInput(progressArgs, input)),
  }),

  reportCrawlComplete: t.field({
    type: KeywordRef,
    authScopes: { spider: true },
    description: "Finish a keyword as COMPLETED (e.g. the site ran out of results) or FAILED with the error.",
    args: { input: t.arg({ type: ReportCrawlCompleteInput, required: true }) },
    resolve: (_root, { input }, ctx) => ctx.store.complete(parseInput(completeArgs, input)),
  }),

  releaseKeyword: t.field({
    type: KeywordRef,
    authScopes: { spider: true },
    description: "Give a keyword back (graceful stop): it becomes PARTIAL and the next claim resumes it.",
    args: { keywordId: t.arg.id({ required: true }), leaseToken: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => {
      const a = parseInput(leaseArgs, args);
      return ctx.store.release(a.keywordId, a.leaseToken);
    },
  }),

  heartbeat: t.field({
    type: KeywordRef,
    authScopes: { spider: true },
    description: "Keep the lease of a keyword whose page takes long (every page report is a heartbeat too).",
    args: { keywordId: t.arg.id({ required: true }), leaseToken: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => {
      const a = parseInput(leaseArgs, args);
      return ctx.store.heartbeat(a.keywordId, a.leaseToken);
    },
  }),
}));
