/**
 * Schedule input: one zod schema for the console form and the API. Browser-safe on purpose (only
 * zod and the pure timing modules): the form shows the same field errors the API would return.
 *
 * Name rules: 1–200 characters of letters, digits, space, `.`, `_`, `:` and `-`, starting with a
 * letter or digit and not ending in a space. No `/`, `?`, `#` or `%`, so a name is also a readable
 * URL path segment (names in URLs are still URL-encoded, for the spaces).
 */
import { z } from "zod";
import { AppError } from "../errors";
import { checkCommandPayload, type PayloadProblem } from "../handlers/command-payload";
import { CronError, parseCron } from "./cron";
import { SCHEDULE_DEFAULTS } from "./defaults";
import { nextSlot } from "./timing";

/** Default payload size limit; the server passes config.payloadMaxBytes. */
export const DEFAULT_PAYLOAD_MAX_BYTES = 64 * 1024;
const DAY = 86_400;
/** The longest interval, lateness or health threshold we accept: one year; anything longer is a typo. */
export const MAX_DURATION_SECONDS = 366 * DAY;
/** The longest attempt timeout we accept: a day (as the `command` handler's own payload.timeoutSeconds). */
export const MAX_TIMEOUT_SECONDS = DAY;
/** Jitter spreads a schedule's due time over at most this window. */
export const MAX_JITTER_SECONDS = 3600;

export const NAME_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9 ._:-]*[A-Za-z0-9._:-])?$/;
/** A tag: 1–64 letters, digits and . _ : - (no spaces, so a list of tags reads as words and fits a URL). */
export const TAG_PATTERN = /^[A-Za-z0-9._:-]{1,64}$/;
export const MAX_TAGS = 20;
/** A queue: 1–64 letters, digits and . _ : -, starting with a letter or digit (SLOTKEEPER_QUEUES uses the same rule). */
export const QUEUE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;
/** The largest maxConcurrent a schedule may have. */
export const MAX_CONCURRENT = 10_000;

const seconds = (min: number, max: number, what: string) =>
  z
    .number({ error: `${what} must be a number of seconds` })
    .int({ error: `${what} must be a whole number of seconds` })
    .min(min, { error: `${what} must be at least ${min} second${min === 1 ? "" : "s"}` })
    .max(max, { error: `${what} must be at most ${max} seconds` });

const retrySchema = z
  .object({
    maxAttempts: z.number().int().min(1, { error: "retry.maxAttempts must be at least 1" }).max(100, { error: "retry.maxAttempts must be at most 100" }),
    baseSeconds: seconds(0, DAY, "retry.baseSeconds"),
    capSeconds: seconds(0, 7 * DAY, "retry.capSeconds"),
  })
  .partial()
  .strict();

const fields = {
  name: z
    .string({ error: "name must be a string" })
    .min(1, { error: "name is required" })
    .max(200, { error: "name must be at most 200 characters" })
    .regex(NAME_PATTERN, { error: "name may use letters, digits, spaces and . _ : - and must start with a letter or digit" }),
  description: z.string().max(2000, { error: "description must be at most 2000 characters" }),
  handler: z.string({ error: "handler must be a string" }).min(1, { error: "handler is required" }).max(200),
  payload: z.record(z.string(), z.unknown(), { error: "payload must be a JSON object" }),
  cron: z.string({ error: "cron must be a string" }).min(1, { error: "cron is empty" }).max(200),
  everySeconds: z
    .number({ error: "everySeconds must be a number of seconds" })
    .int({ error: "everySeconds must be a whole number of seconds" })
    .min(1, { error: "everySeconds must be at least 1 second" })
    .max(MAX_DURATION_SECONDS, { error: `everySeconds must be at most ${MAX_DURATION_SECONDS} seconds (a year)` }),
  timezone: z.string({ error: "timezone must be a string" }).min(1, { error: "timezone is empty" }),
  catchUp: z.enum(["skip", "latest", "all"], { error: "catchUp must be skip, latest or all" }),
  maxLatenessSeconds: seconds(1, MAX_DURATION_SECONDS, "maxLatenessSeconds").nullable(),
  jitterSeconds: seconds(0, MAX_JITTER_SECONDS, "jitterSeconds"),
  overlap: z.enum(["allow", "forbid", "skip"], { error: "overlap must be allow, forbid or skip" }),
  retry: retrySchema,
  leaseSeconds: seconds(1, DAY, "leaseSeconds"),
  enabled: z.boolean({ error: "enabled must be true or false" }),
  lateAfterSeconds: seconds(1, MAX_DURATION_SECONDS, "lateAfterSeconds").nullable(),
  lateGraceSeconds: seconds(0, MAX_DURATION_SECONDS, "lateGraceSeconds").nullable(),
  backlogAfterSeconds: seconds(1, MAX_DURATION_SECONDS, "backlogAfterSeconds").nullable(),
  tags: z
    .array(z.string({ error: "each tag must be a string" }).regex(TAG_PATTERN, { error: "a tag is 1 to 64 letters, digits and . _ : -" }), { error: "tags must be a list of strings" })
    .max(MAX_TAGS, { error: `at most ${MAX_TAGS} tags` })
    .refine((t) => new Set(t).size === t.length, { error: "tags must not repeat" }),
  owner: z.string({ error: "owner must be a string" }).trim().min(1, { error: "owner is empty (leave it out or send null)" }).max(200, { error: "owner must be at most 200 characters" }).nullable(),
  /** How long one attempt may run before the worker aborts it; null: no limit but the lease. */
  timeoutSeconds: seconds(1, MAX_TIMEOUT_SECONDS, "timeoutSeconds").nullable(),
  queue: z.string({ error: "queue must be a string" }).regex(QUEUE_PATTERN, { error: "queue is 1 to 64 letters, digits and . _ : -, starting with a letter or digit" }),
  maxConcurrent: z
    .number({ error: "maxConcurrent must be a whole number, or null for no limit" })
    .int({ error: "maxConcurrent must be a whole number" })
    .min(1, { error: "maxConcurrent must be at least 1 (null: no limit)" })
    .max(MAX_CONCURRENT, { error: `maxConcurrent must be at most ${MAX_CONCURRENT}` })
    .nullable(),
};

/** A create body's retry policy: any subset, each missing part the default (SCHEDULE_DEFAULTS). */
const retryCreateSchema = z
  .object({
    maxAttempts: retrySchema.shape.maxAttempts.unwrap().default(SCHEDULE_DEFAULTS.retry.maxAttempts),
    baseSeconds: retrySchema.shape.baseSeconds.unwrap().default(SCHEDULE_DEFAULTS.retry.baseSeconds),
    capSeconds: retrySchema.shape.capSeconds.unwrap().default(SCHEDULE_DEFAULTS.retry.capSeconds),
  })
  .strict();

/**
 * POST /api/schedules body; unknown fields are refused. What the body leaves out is filled in from
 * SCHEDULE_DEFAULTS, so the parsed input is the whole schedule (health overrides stay null: the
 * default rule).
 */
export const scheduleCreateSchema = z
  .object({
    ...fields,
    description: fields.description.default(SCHEDULE_DEFAULTS.description),
    payload: fields.payload.default(() => ({ ...SCHEDULE_DEFAULTS.payload })),
    cron: fields.cron.optional(),
    everySeconds: fields.everySeconds.optional(),
    timezone: fields.timezone.default(SCHEDULE_DEFAULTS.timezone),
    catchUp: fields.catchUp.default(SCHEDULE_DEFAULTS.catchUp),
    maxLatenessSeconds: fields.maxLatenessSeconds.default(SCHEDULE_DEFAULTS.maxLatenessSeconds),
    jitterSeconds: fields.jitterSeconds.default(SCHEDULE_DEFAULTS.jitterSeconds),
    overlap: fields.overlap.default(SCHEDULE_DEFAULTS.overlap),
    retry: retryCreateSchema.default(() => ({ ...SCHEDULE_DEFAULTS.retry })),
    leaseSeconds: fields.leaseSeconds.default(SCHEDULE_DEFAULTS.leaseSeconds),
    enabled: fields.enabled.default(SCHEDULE_DEFAULTS.enabled),
    lateAfterSeconds: fields.lateAfterSeconds.default(null),
    lateGraceSeconds: fields.lateGraceSeconds.default(null),
    backlogAfterSeconds: fields.backlogAfterSeconds.default(null),
    tags: fields.tags.default(() => [...SCHEDULE_DEFAULTS.tags]),
    owner: fields.owner.default(SCHEDULE_DEFAULTS.owner),
    timeoutSeconds: fields.timeoutSeconds.default(SCHEDULE_DEFAULTS.timeoutSeconds),
    queue: fields.queue.default(SCHEDULE_DEFAULTS.queue),
    maxConcurrent: fields.maxConcurrent.default(SCHEDULE_DEFAULTS.maxConcurrent),
  })
  .strict();

/** PATCH /api/schedules/{name} body: any subset of the fields, plus the `version` the editor read. */
export const schedulePatchSchema = z
  .object({
    ...Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v.optional()])),
    cron: fields.cron.nullable().optional(),
    everySeconds: fields.everySeconds.nullable().optional(),
    version: z.number({ error: "version must be a number" }).int().min(1),
  })
  .partial()
  .strict() as unknown as z.ZodType<SchedulePatch>;

/** A parsed create body: every field present, the defaults filled in. */
export type ScheduleCreateInput = z.output<typeof scheduleCreateSchema>;
/** Only what the body names changes; `cron`/`everySeconds` switch the kind of timing. */
export type SchedulePatch = Partial<Omit<ScheduleCreateInput, "cron" | "everySeconds" | "retry">> & {
  retry?: Partial<ScheduleCreateInput["retry"]>;
  cron?: string | null;
  everySeconds?: number | null;
  version?: number;
};

/** Parse options; the server passes its configured payload limit. */
export type ParseOptions = { payloadMaxBytes?: number };

function fail(message: string, field: string): never {
  throw new AppError("invalid", message, field);
}

function byteLength(s: string): number {
  return new TextEncoder().encode(s).length;
}

/** Check cron + timezone together (field names the culprit), and that the expression ever fires. */
export function validateTiming(t: { cron?: string | null; everySeconds?: number | null; timezone?: string }): void {
  const timezone = t.timezone ?? SCHEDULE_DEFAULTS.timezone;
  if (t.cron) {
    try {
      const parsed = parseCron(t.cron, timezone);
      if (!nextSlot({ cron: parsed.expr, timezone }, new Date())) fail(`cron expression "${t.cron}" never fires`, "cron");
    } catch (err) {
      if (err instanceof CronError) fail(err.message, err.field);
      throw err;
    }
  } else {
    try {
      parseCron("0 0 * * *", timezone);
    } catch (err) {
      if (err instanceof CronError) fail(err.message, "timezone");
      throw err;
    }
  }
}

/**
 * Payload rules of the handlers that have them, by handler name: a payload the handler could never
 * run is refused when the schedule is saved, naming the field (`payload.args`), not at 3 a.m.
 */
const PAYLOAD_CHECKS: Record<string, (payload: unknown) => PayloadProblem | null> = {
  command: checkCommandPayload,
};

/**
 * Check a schedule's payload against its handler's rules (a no-op for handlers without any).
 * Called for a create body and, on an edit, for the stored schedule with the edit applied.
 */
export function validateHandlerPayload(handler: string, payload: unknown): void {
  const problem = PAYLOAD_CHECKS[handler]?.(payload ?? {});
  if (problem) fail(problem.message, problem.field);
}

/**
 * maxConcurrent above 1 contradicts an overlap policy of forbid or skip (which run one at a time):
 * refused naming maxConcurrent. Checked on a create body and, on an edit, on the merged schedule.
 */
export function validateConcurrency(s: { overlap?: string; maxConcurrent?: number | null }): void {
  if (s.maxConcurrent != null && s.maxConcurrent > 1 && s.overlap !== undefined && s.overlap !== "allow") {
    fail(`maxConcurrent ${s.maxConcurrent} needs overlap allow: overlap ${s.overlap} runs one at a time (leave maxConcurrent out, or set it to 1)`, "maxConcurrent");
  }
}

/**
 * Validate a create or patch body: returns the typed input, or throws AppError("invalid", message,
 * field) where field is the camelCase path at fault ("cron", "retry.capSeconds", "payload").
 */
export function parseScheduleInput(body: unknown, mode: "create", opts?: ParseOptions): ScheduleCreateInput;
export function parseScheduleInput(body: unknown, mode: "patch", opts?: ParseOptions): SchedulePatch;
export function parseScheduleInput(body: unknown, mode: "create" | "patch", opts?: ParseOptions): ScheduleCreateInput | SchedulePatch;
export function parseScheduleInput(body: unknown, mode: "create" | "patch", opts: ParseOptions = {}): ScheduleCreateInput | SchedulePatch {
  if (typeof body !== "object" || body === null || Array.isArray(body)) fail("the body must be a JSON object", "body");
  const parsed = (mode === "create" ? scheduleCreateSchema : schedulePatchSchema).safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue.path.map(String);
    if (issue.code === "unrecognized_keys") fail(`unknown field "${[...path, issue.keys[0]].join(".")}"`, [...path, issue.keys[0]].join("."));
    fail(issue.message, path.join(".") || "body");
  }
  const input = parsed.data as ScheduleCreateInput & SchedulePatch;
  if (input.cron && input.everySeconds) fail("give either cron or everySeconds, not both", "everySeconds");
  if (mode === "create" && !input.cron && !input.everySeconds) fail("give a cron expression or everySeconds", "cron");
  if (mode === "patch" && input.cron === null && input.everySeconds === null) fail("give a cron expression or everySeconds", "cron");
  if (input.retry?.baseSeconds !== undefined && input.retry.capSeconds !== undefined && input.retry.capSeconds < input.retry.baseSeconds) {
    fail("retry.capSeconds must be at least retry.baseSeconds", "retry.capSeconds");
  }
  if (input.payload !== undefined) {
    const max = opts.payloadMaxBytes ?? DEFAULT_PAYLOAD_MAX_BYTES;
    if (byteLength(JSON.stringify(input.payload)) > max) fail(`payload is larger than ${max} bytes of JSON`, "payload");
  }
  // A patch is checked on save too, against the stored schedule (updateSchedule).
  validateConcurrency(input);
  // A patch that does not name both is checked on save, against the stored schedule (updateSchedule).
  if (mode === "create" || (input.handler !== undefined && input.payload !== undefined)) validateHandlerPayload(input.handler!, input.payload);
  if (input.cron || input.everySeconds || input.timezone !== undefined) {
    // In a patch without timing, the timezone alone is checked; the merged timing is checked on save.
    validateTiming(mode === "patch" && !input.cron ? { timezone: input.timezone } : input);
  }
  return input;
}
