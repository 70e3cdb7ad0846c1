import { z } from "zod";
import type { Schedule } from "../db/schema";
import { scheduleHealthSchema } from "../health/schedule-health";
import { NEVER } from "./catch-up";
import { maskSecrets } from "../security/mask";
import { DATABASE_OUTAGE_ALLOWANCE_SECONDS, worstCaseLatenessSeconds } from "./lateness";
import { driftedFields } from "./as-code/drift";
import { specOfRow } from "./as-code/spec";
import { scheduleCreateSchema } from "./input";

const spec = scheduleCreateSchema.shape;

/**
 * A schedule as the API shows it (camelCase): the create body's fields with the defaults applied
 * and both timing fields present (one null), the same field list as the spec (lib/schedules/as-code/spec.ts),
 * plus identity and bookkeeping.
 */
export const scheduleViewSchema = z
  .object({
    id: z.number().int(),
    ...spec,
    cron: spec.cron.unwrap().nullable(),
    everySeconds: spec.everySeconds.unwrap().nullable(),
    /** The payload with its secrets masked (lib/security/mask.ts). */
    payload: z.unknown(),
    /** The next slot the tick has not materialised yet; null when a cron expression never fires again. */
    nextSlotAt: z.string().nullable(),
    partition: z.number().int(),
    /** The `source` of the schedules file that last created or changed it; null for a console-made schedule. */
    managedBy: z.string().nullable(),
    /** A managed schedule whose stored settings differ from what its file last applied (driftedFields says which). */
    drifted: z.boolean(),
    driftedFields: z.array(z.string()),
    /** Why it was paused by hand (an apply leaves it paused), and when the worker resumes it; null when not set. */
    pausedNote: z.string().nullable(),
    resumeAt: z.string().nullable(),
    /**
     * The latest a slot's first attempt starts, in seconds after the slot, while the database is up:
     * jitter + 2 × poll interval + max(lease, 4) (lib/schedules/lateness.ts). It holds when workers
     * die, freeze, lose connections or restart, given a free slot on a live worker.
     */
    worstCaseLatenessSeconds: z.number(),
    /** A database outage adds its own length plus up to this many seconds (the workers' reconnect back-off). */
    databaseOutageAllowanceSeconds: z.number(),
    createdAt: z.string(),
    updatedAt: z.string(),
    version: z.number().int(),
  })
  .strict();
export type ScheduleView = z.output<typeof scheduleViewSchema>;

/** A schedule with its health numbers (lib/health/schedule-health.ts): every schedule answer of the API. */
export const scheduleWithHealthSchema = scheduleViewSchema
  .extend(scheduleHealthSchema.pick({ sinceLastSuccessSeconds: true, deadRuns: true, oldestPendingAgeSeconds: true, status: true, unservedHandler: true }).partial().shape)
  .extend({
    /** A run of the schedule is stuck (lib/runs/stuck.ts), and since when; false and null otherwise. */
    stuck: z.boolean().optional(),
    stuckSince: z.string().nullable().optional(),
  })
  .strict();
export type ScheduleWithHealth = z.output<typeof scheduleWithHealthSchema>;

const iso = (d: Date | string) => new Date(d).toISOString();

/** Map a schedules row to its API JSON shape. */
export function toScheduleView(row: Schedule, pollIntervalMs?: number): ScheduleView {
  const next = new Date(row.nextSlotAt);
  const drift = driftedFields(row);
  return {
    id: row.id,
    // The body's fields are the spec's (one field list: lib/schedules/as-code/spec.ts), but
    // secrets (Authorization headers, passwords, tokens…) never leave the server in full.
    ...specOfRow(row),
    payload: maskSecrets(row.payload),
    nextSlotAt: next.getTime() >= NEVER.getTime() ? null : next.toISOString(),
    partition: row.partition,
    managedBy: row.managedBy ?? null,
    drifted: drift.length > 0,
    driftedFields: drift,
    pausedNote: row.pausedNote ?? null,
    resumeAt: row.resumeAt ? iso(row.resumeAt) : null,
    worstCaseLatenessSeconds: worstCaseLatenessSeconds(row, pollIntervalMs),
    databaseOutageAllowanceSeconds: DATABASE_OUTAGE_ALLOWANCE_SECONDS,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
    version: row.version,
  };
}
