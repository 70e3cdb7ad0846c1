/**
 * The bodies of the bulk routes: an action and a filter that the server resolves itself, so a
 * bulk action reaches every match, not just the page a browser loaded. A 400 names the field.
 */
import { z } from "zod";
import { AppError } from "../errors";
import { HEALTH_STATUSES } from "../health/schedule-health";

const instant = z.iso.datetime({ offset: true, error: "must be an ISO 8601 instant" });
const text = (max: number) => z.string().trim().min(1, { error: "must not be empty (leave it out instead)" }).max(max, { error: `must be at most ${max} characters` });

const scheduleFilter = z
  .object({
    search: text(200).optional(),
    tag: text(100).optional(),
    owner: text(200).optional(),
    status: z.enum(HEALTH_STATUSES, { error: `must be one of ${HEALTH_STATUSES.join(", ")}` }).optional(),
  }, { error: "must be an object of filters ({} for every schedule)" })
  .strict();

const runFilter = z
  .object({
    schedule: text(200).optional(),
    from: instant.optional(),
    to: instant.optional(),
  }, { error: "must be an object of filters ({} for every dead run)" })
  .strict();

export const schedulesBody = z
  .object({
    action: z.enum(["pause", "resume"], { error: "must be pause or resume" }),
    filter: scheduleFilter,
    note: text(2000).optional(),
    dryRun: z.boolean({ error: "must be true or false" }).optional(),
  })
  .strict();

export const runsBody = z
  .object({
    action: z.enum(["requeue", "discard"], { error: "must be requeue or discard" }),
    filter: runFilter,
    reason: text(500).optional(),
    dryRun: z.boolean({ error: "must be true or false" }).optional(),
  })
  .strict();

export type BulkSchedulesRequest = z.infer<typeof schedulesBody>;
export type ScheduleBulkFilter = BulkSchedulesRequest["filter"];
export type BulkRunsRequest = Omit<z.infer<typeof runsBody>, "filter"> & { filter: { schedule?: string; from?: Date; to?: Date } };

function parse<T>(schema: z.ZodType<T>, raw: unknown): T {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  if (issue.code === "unrecognized_keys") {
    const field = [...issue.path, issue.keys[0]].join(".");
    throw new AppError("invalid", `unknown field "${field}"`, field);
  }
  const field = issue.path.join(".") || "body";
  throw new AppError("invalid", field === "body" ? "the body must be a JSON object { action, filter, … }" : `${field} ${issue.message}`, field);
}

/** POST /api/bulk/schedules: `{ action: "pause" | "resume", filter: { search?, tag?, owner?, status? }, note?, dryRun? }`. */
export function parseBulkSchedules(raw: unknown): BulkSchedulesRequest {
  const b = parse(schedulesBody, raw);
  if (b.note !== undefined && b.action !== "pause") throw new AppError("invalid", "note goes with pause only", "note");
  return b;
}

/** POST /api/bulk/runs: `{ action: "requeue" | "discard", filter: { schedule?, from?, to? }, reason?, dryRun? }` over dead runs. */
export function parseBulkRuns(raw: unknown): BulkRunsRequest {
  const b = parse(runsBody, raw);
  if (b.reason !== undefined && b.action !== "discard") throw new AppError("invalid", "reason goes with discard only", "reason");
  const from = b.filter.from ? new Date(b.filter.from) : undefined;
  const to = b.filter.to ? new Date(b.filter.to) : undefined;
  if (from && to && from >= to) throw new AppError("invalid", "filter.from must be before filter.to", "filter.from");
  return { ...b, filter: { schedule: b.filter.schedule, from, to } };
}
