/**
 * A schedule's normalized body: every field of a create body, defaults applied, both timing
 * fields present (one null). What a schedules file's entry becomes, what `managed_spec` stores and
 * what a stored schedule reads as, so the three compare field by field.
 */
import type { Schedule } from "../../db/schema";
import type { ScheduleCreateInput } from "../input";
import { SCHEDULE_DEFAULTS } from "../defaults";

export type ScheduleSpec = Omit<ScheduleCreateInput, "cron" | "everySeconds"> & { cron: string | null; everySeconds: number | null };

/** The fields compared, in the body's order. */
export const SPEC_FIELDS = [
  "name", "description", "handler", "payload", "cron", "everySeconds", "timezone", "catchUp", "maxLatenessSeconds", "jitterSeconds",
  "overlap", "retry", "leaseSeconds", "enabled", "lateAfterSeconds", "lateGraceSeconds", "backlogAfterSeconds", "tags", "owner",
  "timeoutSeconds",
  "queue", "maxConcurrent",
] as const satisfies readonly (keyof ScheduleSpec)[];

/** A parsed create body as a spec. */
export function specOfInput(input: ScheduleCreateInput): ScheduleSpec {
  return { ...input, cron: input.cron ?? null, everySeconds: input.everySeconds ?? null };
}

/** A stored schedule as a spec (its raw payload, secrets included). */
export function specOfRow(row: Schedule): ScheduleSpec {
  return {
    name: row.name,
    description: row.description,
    handler: row.handler,
    payload: row.payload as Record<string, unknown>,
    cron: row.cron,
    everySeconds: row.everySeconds,
    timezone: row.timezone,
    catchUp: row.catchUp,
    maxLatenessSeconds: row.maxLatenessSeconds,
    jitterSeconds: row.jitterSeconds,
    overlap: row.overlap,
    retry: { maxAttempts: row.retryMaxAttempts, baseSeconds: row.retryBaseSeconds, capSeconds: row.retryCapSeconds },
    leaseSeconds: row.leaseSeconds,
    enabled: row.enabled,
    lateAfterSeconds: row.lateAfterSeconds,
    lateGraceSeconds: row.lateGraceSeconds,
    backlogAfterSeconds: row.backlogAfterSeconds,
    tags: row.tags,
    owner: row.owner,
    timeoutSeconds: row.timeoutSeconds ?? null,
    queue: row.queue,
    maxConcurrent: row.maxConcurrent ?? null,
  };
}

/**
 * Fields added to the body after specs were first stored, with the value a spec that predates them
 * means: a managed_spec written before queues existed compares as the default queue, no limit.
 */
const ADDED_FIELDS: Partial<ScheduleSpec> = { queue: SCHEDULE_DEFAULTS.queue, maxConcurrent: SCHEDULE_DEFAULTS.maxConcurrent };

/** A stored managed_spec with the later fields it lacks filled in. */
export function withAddedFields(spec: Partial<ScheduleSpec>): Partial<ScheduleSpec> {
  return { ...ADDED_FIELDS, ...spec };
}

/** JSON with object keys sorted (jsonb does not keep key order), so equal values compare equal. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v && typeof v === "object") {
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(",")}}`;
  }
  return JSON.stringify(v ?? null);
}

/** The fields whose values differ between two specs; `except` leaves some out. */
export function differingFields(a: Partial<ScheduleSpec>, b: Partial<ScheduleSpec>, except: readonly string[] = []): string[] {
  return SPEC_FIELDS.filter((f) => !except.includes(f) && canonical(a[f]) !== canonical(b[f]));
}
