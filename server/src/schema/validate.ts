// Argument validation with zod; a failure is BAD_USER_INPUT naming each bad field, raised before
// anything is read or written.
import { z } from "zod";
import { badInput } from "../errors.ts";

export function parseInput<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const fields = r.error.issues.map((i) => ({ path: i.path.join("."), message: i.message }));
  throw badInput(fields.map((f) => (f.path ? `${f.path}: ${f.message}` : f.message)).join("; "), { fields });
}

/** Keyword ids are 32-bit on PostgreSQL: a larger one can only be a client error. */
const MAX_ID = 2_147_483_647;

/** A database id given as GraphQL ID: digits only (" 1" is not an id). */
export const idInt = z
  .union([z.string(), z.number()])
  .transform((v) => String(v))
  .refine((v) => /^[1-9]\d{0,9}$/.test(v) && Number(v) <= MAX_ID, "must be a positive integer id")
  .transform(Number);

/** Text columns cannot hold NUL (PostgreSQL refuses it): refused as bad input, not a server error. */
export const NO_NUL = /^[^\u0000]*$/;
const NUL_MESSAGE = "must not contain NUL characters";
/** A string stored in, or compared with, a database column. */
export const text = () => z.string().regex(NO_NUL, NUL_MESSAGE);

export const sourceId = text().trim().min(1).max(32);
export const crawlerId = z.string().trim().min(1, "must not be empty").max(64).regex(/^[\x21-\x7e]+$/, "printable ASCII without spaces");
export const leaseToken = text().min(1).max(64);
export const city = text().trim().min(1, "must not be empty").max(64);
export const job = text().trim().min(1, "must not be empty").max(128);
export const errorMessage = text().max(2000);
export const search = text().trim().max(100);

/** Argument shapes several resolvers share. */
export const byId = z.object({ id: idInt });
export const bySource = z.object({ source: sourceId });
export const byOptionalSource = z.object({ source: sourceId.nullish() });
