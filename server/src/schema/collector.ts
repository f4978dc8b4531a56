// The incremental collector's GraphQL surface: tasks with their progress and runs, admin control
// (create, update, start, stop, reset) and live progress by subscription.
import { z } from "zod";
import { Repeater } from "graphql-yoga";
import type { InputFieldBuilder } from "@pothos/core";
import type { CollectorTask } from "../../../generated/sqlite/client.ts";
import { CollectorSink, CollectorStatus } from "../../../generated/sqlite/enums.ts";
import { coveredCount, parseRanges, type Range } from "../collector/coverage.ts";
import type { CollectorLag } from "../collector/service.ts";
import { subjectOf } from "../collector/sinks/nats.ts";
import { createTaskSchema, updateTaskSchema } from "../collector/task-config.ts";
import { notFound } from "../errors.ts";
import { builder } from "./builder.ts";
import { byId, idInt, parseInput } from "./validate.ts";

const CollectorSinkEnum = builder.enumType(CollectorSink, {
  name: "CollectorSink",
  description: "Where a task's fresh records go. KAFKA is refused with SINK_UNAVAILABLE in this build.",
});
const CollectorStatusEnum = builder.enumType(CollectorStatus, { name: "CollectorStatus" });

const OffsetRangeRef = builder.objectRef<Range>("OffsetRange").implement({
  description: "Upstream offsets [from, to): from inclusive, to exclusive.",
  fields: (t) => ({
    from: t.int({ resolve: (r) => r[0] }),
    to: t.int({ resolve: (r) => r[1] }),
  }),
});

const ConsumerLagRef = builder.objectRef<{ name: string; pending: number; ackPending: number }>("CollectorConsumerLag").implement({
  fields: (t) => ({
    name: t.exposeString("name"),
    pending: t.exposeInt("pending", { description: "Messages not yet delivered to this consumer." }),
    ackPending: t.exposeInt("ackPending", { description: "Delivered, not yet acknowledged." }),
  }),
});

const CollectorLagRef = builder.objectRef<CollectorLag>("CollectorLag").implement({
  description: "How far behind a task is: upstream records it has not dealt with, and sink records its consumers have not.",
  fields: (t) => ({
    head: t.int({ nullable: true, description: "The upstream's total right now.", resolve: (l) => l.head }),
    behindHead: t.int({ nullable: true, description: "Upstream records not covered yet (head − covered).", resolve: (l) => l.behindHead }),
    sinkMessages: t.int({ nullable: true, description: "Records the sink holds.", resolve: (l) => l.sink?.messages ?? null }),
    sinkPending: t.int({
      nullable: true,
      description: "Records the furthest-behind consumer has not processed (JetStream pending + ack pending); null without consumers.",
      resolve: (l) => l.sink?.pending ?? null,
    }),
    consumers: t.field({ type: [ConsumerLagRef], resolve: (l) => l.sink?.consumers ?? [] }),
    error: t.string({ nullable: true, description: "Why part of the lag is unknown.", resolve: (l) => l.error }),
  }),
});

const CollectorRunRef = builder.prismaObject("CollectorRun", {
  description: "One run of a task and what it did.",
  fields: (t) => ({
    id: t.exposeID("id"),
    taskId: t.exposeID("taskId"),
    status: t.expose("status", { type: CollectorStatusEnum }),
    trigger: t.exposeString("trigger", { description: "manual, schedule or autostart" }),
    startedAt: t.expose("startedAt", { type: "DateTime" }),
    finishedAt: t.expose("finishedAt", { type: "DateTime", nullable: true }),
    total: t.exposeInt("total", { description: "Upstream total when the run began." }),
    batches: t.exposeInt("batches"),
    fetchedCount: t.exposeInt("fetchedCount"),
    filteredCount: t.exposeInt("filteredCount", { description: "Fresh records found." }),
    producedCount: t.exposeInt("producedCount", { description: "Fresh records published to the sink." }),
    duplicateCount: t.exposeInt("duplicateCount", {
      description: "Of those, records the sink already had (dropped as duplicates: a replayed batch, or a key the upstream repeats).",
    }),
    expiredBatches: t.exposeInt("expiredBatches", { description: "Consecutive batches without a fresh record at the end." }),
    staleBelow: t.exposeInt("staleBelow", { nullable: true, description: "A first run's expiry rule declared offsets below this stale." }),
    error: t.exposeString("error"),
  }),
});

const CollectorProgressRef = builder.objectRef<CollectorTask>("CollectorProgress").implement({
  description: "A task's progress since its last reset.",
  fields: (t) => ({
    taskId: t.id({ resolve: (task) => task.id }),
    status: t.field({ type: CollectorStatusEnum, resolve: (task, _a, ctx) => ctx.collector.store.statusOf(task) }),
    total: t.exposeInt("total", { description: "Upstream total seen by the latest run." }),
    coveredCount: t.int({
      description: "Offsets below total dealt with (visited, or declared stale by the first run).",
      resolve: (task) => coveredCount(parseRanges(task.coveredRanges), task.total),
    }),
    coveredRanges: t.field({ type: [OffsetRangeRef], resolve: (task) => parseRanges(task.coveredRanges) }),
    filteredCount: t.exposeInt("filteredCount", { description: "Fresh records found, each counted once." }),
    producedCount: t.exposeInt("producedCount", { description: "Records published to the sink, each counted once." }),
    lastError: t.exposeString("lastError"),
    lastUpdate: t.expose("lastUpdate", { type: "DateTime", nullable: true }),
    run: t.field({
      type: CollectorRunRef,
      nullable: true,
      description: "The run going on, or the latest one.",
      resolve: (task, _a, ctx) => (task.runId === null ? null : ctx.db.collectorRun.findUnique({ where: { id: task.runId } })),
    }),
    lag: t.field({
      type: CollectorLagRef,
      description: "Asks the upstream and the sink now (a few seconds at most).",
      resolve: (task, _a, ctx) => ctx.collector.lag(task),
    }),
  }),
});

builder.prismaObject("CollectorTask", {
  description: "An upstream API pulled incrementally, newest first, into a sink.",
  fields: (t) => ({
    id: t.exposeID("id"),
    name: t.exposeString("name"),
    url: t.exposeString("url"),
    idField: t.exposeString("idField", { description: "Record field holding the key (message id downstream)." }),
    enabled: t.exposeBoolean("enabled"),
    autoStart: t.exposeBoolean("autoStart", { description: "Also started when the server starts." }),
    batchSize: t.exposeInt("batchSize"),
    filterDays: t.exposeInt("filterDays", { description: "Fresh = dated within this many days of today (CRAWL_TZ)." }),
    maxExpiredBatches: t.exposeInt("maxExpiredBatches", { description: "First run: this many batches in a row without a fresh record end it (0 = never)." }),
    schedule: t.exposeString("schedule", { nullable: true, description: "croner expression in CRAWL_TZ." }),
    nextRunAt: t.field({ type: "DateTime", nullable: true, resolve: (task, _a, ctx) => ctx.collector.nextRunAt(task.id) }),
    sink: t.expose("sink", { type: CollectorSinkEnum }),
    stream: t.string({
      nullable: true,
      description: "NATS stream (sink NATS); its subject is `<stream>.records`.",
      resolve: (task) => (task.sink === CollectorSink.NATS ? (task.stream ?? `COLLECTOR_${task.id}`) : task.stream),
    }),
    subject: t.string({
      nullable: true,
      resolve: (task) => (task.sink === CollectorSink.NATS ? subjectOf(task.stream ?? `COLLECTOR_${task.id}`) : null),
    }),
    progress: t.field({ type: CollectorProgressRef, resolve: (task) => task }),
    runs: t.relation("runs", {
      description: "Runs, newest first.",
      args: { last: t.arg.int({ defaultValue: 10 }) },
      query: (args) => ({ orderBy: { id: "desc" }, take: Math.min(Math.max(args.last ?? 10, 1), 100) }),
    }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
  }),
});

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;

/** The fields both inputs share; name and url are required only to create. */
const settingFields = (t: InputFieldBuilder<Types, "InputObject">) => ({
  idField: t.string({ description: 'Record field holding the key (default "id").' }),
  enabled: t.boolean(),
  autoStart: t.boolean(),
  batchSize: t.int({ description: "1–1000 (default 100)." }),
  filterDays: t.int({ description: "0–3650 (default 7)." }),
  maxExpiredBatches: t.int({ description: "0–1000 (default 3; 0 = a first run never ends early)." }),
  sink: t.field({ type: CollectorSinkEnum }),
  schedule: t.string({ description: 'croner expression (5 or 6 fields) in CRAWL_TZ; "" = none.' }),
  stream: t.string({ description: 'NATS stream name; "" = COLLECTOR_<id>.' }),
});
const URL_HELP = "GET <url>?offset=O&limit=L → { data: { total, data: [record…] } }";

const CreateCollectorTaskInput = builder.inputType("CreateCollectorTaskInput", {
  fields: (t) => ({ name: t.string({ required: true }), url: t.string({ required: true, description: URL_HELP }), ...settingFields(t) }),
});
const UpdateCollectorTaskInput = builder.inputType("UpdateCollectorTaskInput", {
  description: "Omitted fields keep their value. Takes effect at the next run.",
  fields: (t) => ({ name: t.string(), url: t.string({ description: URL_HELP }), ...settingFields(t) }),
});

/** null from GraphQL means "not given": drop it so zod's defaults apply. */
const given = (o: object) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined));
const updateArgs = z.object({ id: idInt, input: updateTaskSchema });
const startArgs = z.object({ id: idInt, reset: z.boolean().nullish() });
const byTaskId = z.object({ taskId: idInt });

builder.queryFields((t) => ({
  collectorTasks: t.prismaField({
    type: ["CollectorTask"],
    resolve: (query, _root, _args, ctx) => ctx.db.collectorTask.findMany({ ...query, orderBy: { id: "asc" } }),
  }),
  collectorTask: t.prismaField({
    type: "CollectorTask",
    nullable: true,
    args: { id: t.arg.id({ required: true }) },
    resolve: (query, _root, args, ctx) => ctx.db.collectorTask.findUnique({ ...query, where: { id: parseInput(byId, args).id } }),
  }),
}));

builder.mutationFields((t) => ({
  createCollectorTask: t.prismaField({
    type: "CollectorTask",
    authScopes: { admin: true },
    args: { input: t.arg({ type: CreateCollectorTaskInput, required: true }) },
    resolve: (_q, _root, { input }, ctx) => ctx.collector.create(parseInput(createTaskSchema, given(input))),
  }),
  updateCollectorTask: t.prismaField({
    type: "CollectorTask",
    authScopes: { admin: true },
    args: { id: t.arg.id({ required: true }), input: t.arg({ type: UpdateCollectorTaskInput, required: true }) },
    resolve: (_q, _root, args, ctx) => {
      const { id, input } = parseInput(updateArgs, { id: args.id, input: given(args.input) });
      return ctx.collector.update(id, given(input));
    },
  }),
  startCollectorTask: t.prismaField({
    type: "CollectorTask",
    authScopes: { admin: true },
    description: "Start a run now (reset: true forgets the progress first). INVALID_TRANSITION if one is going.",
    args: { id: t.arg.id({ required: true }), reset: t.arg.boolean({ defaultValue: false }) },
    resolve: (_q, _root, args, ctx) => {
      const { id, reset } = parseInput(startArgs, args);
      return ctx.collector.start(id, { reset: reset ?? false });
    },
  }),
  stopCollectorTask: t.prismaField({
    type: "CollectorTask",
    authScopes: { admin: true },
    description: "Stop the run at its batch boundary; the next run resumes the unvisited offsets. INVALID_TRANSITION if none is going.",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_q, _root, args, ctx) => ctx.collector.stop(parseInput(byId, args).id),
  }),
  resetCollectorTask: t.prismaField({
    type: "CollectorTask",
    authScopes: { admin: true },
    description: "Forget the progress (coverage, counts, error): IDLE. The sink keeps what it has.",
    args: { id: t.arg.id({ required: true }) },
    resolve: (_q, _root, args, ctx) => ctx.collector.reset(parseInput(byId, args).id),
  }),
}));

builder.subscriptionFields((t) => ({
  collectorProgress: t.field({
    type: CollectorProgressRef,
    description: "A task's progress: at once, then after every batch and status change.",
    args: { taskId: t.arg.id({ required: true }) },
    subscribe: async (_root, args, ctx) => {
      const { taskId } = parseInput(byTaskId, args);
      if (!(await ctx.collector.store.find(taskId))) throw notFound(`collector task ${taskId} does not exist`);
      const changes = ctx.bus.subscribe("collectorChanged", taskId);
      return new Repeater<number>(async (push, stop) => {
        void stop.then(() => changes.return?.());
        await push(taskId);
        for await (const _ of changes) await push(taskId);
        stop();
      });
    },
    resolve: async (parent, _args, ctx) => {
      const task = await ctx.collector.store.find(parent as number);
      if (!task) throw notFound(`collector task ${parent} no longer exists`);
      return task;
    },
  }),
}));
