// A collector task's configuration: one zod schema for the GraphQL input and the tasks file.
import { z } from "zod";
import { CollectorSink } from "../../../generated/sqlite/enums.ts";
import { validCron } from "../config.ts";
import { text } from "../schema/validate.ts";

export const taskFields = {
  name: text().trim().min(1, "must not be empty").max(100),
  url: text()
    .trim()
    .max(2000)
    .refine((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), "must be an http:// or https:// URL"),
  idField: text().trim().min(1).max(64),
  enabled: z.boolean(),
  autoStart: z.boolean(),
  batchSize: z.number().int().min(1).max(1000),
  filterDays: z.number().int().min(0).max(3650),
  /** 0 = a first run never ends early. */
  maxExpiredBatches: z.number().int().min(0).max(1000),
  /** "" clears it (manual runs only). */
  schedule: z
    .string()
    .trim()
    .max(100)
    .refine((s) => s === "" || validCron(s), "invalid cron expression (5 or 6 fields)"),
  sink: z.enum(CollectorSink),
  /** NATS stream name; "" = derived from the task id. */
  stream: z.string().trim().regex(/^([A-Za-z0-9_-]{1,64})?$/, "letters, digits, _ and - only (at most 64)"),
};

export const createTaskSchema = z.object({
  name: taskFields.name,
  url: taskFields.url,
  idField: taskFields.idField.default("id"),
  enabled: taskFields.enabled.default(true),
  autoStart: taskFields.autoStart.default(false),
  batchSize: taskFields.batchSize.default(100),
  filterDays: taskFields.filterDays.default(7),
  maxExpiredBatches: taskFields.maxExpiredBatches.default(3),
  schedule: taskFields.schedule.default(""),
  sink: taskFields.sink.default(CollectorSink.DATABASE),
  stream: taskFields.stream.default(""),
});

/** Omitted (or null) fields keep their value. */
export const updateTaskSchema = z.object(
  Object.fromEntries(Object.entries(taskFields).map(([k, v]) => [k, (v as z.ZodType).nullish()])) as {
    [K in keyof typeof taskFields]: z.ZodOptional<z.ZodNullable<(typeof taskFields)[K]>>;
  },
);

export type TaskConfig = z.infer<typeof createTaskSchema>;
export type TaskPatch = Partial<TaskConfig>;

/** The tasks file: `{ "tasks": [ … ] }` (or a bare array), each entry a createCollectorTask input. */
export const tasksFileSchema = z.preprocess((v) => (Array.isArray(v) ? { tasks: v } : v), z.object({ tasks: z.array(createTaskSchema) }));
