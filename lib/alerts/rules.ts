/**
 * The alert rules are the health rules (lib/health/schedule-health.ts): one definition of late,
 * failing, backlogged, unserved and stuck serves the console's status, these alerts and the metrics. This module
 * only turns one schedule's health into one row per rule for the transition detector, carrying the
 * numbers every notification must name.
 */
import { z } from "zod";
import { HEALTH_STATUSES, type ScheduleHealth } from "../health/schedule-health";
import { stuckRunSchema } from "../runs/stuck";
import { unservedHandlerSchema } from "../runs/unserved";

export const ALERT_RULES = ["late", "failing", "backlogged", "unserved", "stuck"] as const;
export type AlertRule = (typeof ALERT_RULES)[number];

/** firing and resolved are transitions; a reminder repeats a firing alert that stayed bad. */
export const ALERT_KINDS = ["firing", "resolved", "reminder"] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];

/** What an alert event records: the numbers at that moment, the thresholds and the console link. */
export const alertDetailsSchema = z
  .object({
    status: z.enum([...HEALTH_STATUSES, "deleted"]),
    sinceLastSuccessSeconds: z.number().nullable(),
    deadRuns: z.number().int(),
    oldestPendingAgeSeconds: z.number().nullable(),
    lateAfterSeconds: z.number().nullable(),
    backlogAfterSeconds: z.number().nullable(),
    /** Seconds since the schedule was created: "late" counts from here when it never succeeded. */
    ageSeconds: z.number(),
    url: z.string(),
    /** The handler no live worker serves and since when its oldest due run waits (the unserved rule); null when served. */
    unservedHandler: unservedHandlerSchema.nullable().optional(),
    /** The unserved rule's threshold: the schedule's stated worst-case lateness. */
    unservedAfterSeconds: z.number().optional(),
    /** The stuck run (the stuck rule): its id, start, since when it is stuck and the threshold it crossed; null when none. */
    stuckRun: stuckRunSchema.nullable().optional(),
    /** When the rule started firing (on firing and reminder events, and on resolved: how long it lasted). */
    firingSince: z.string().nullable().optional(),
  })
  .strict();
export type AlertDetails = z.infer<typeof alertDetailsSchema>;

/** One (schedule, rule) verdict for the transition detector. */
export type RuleVerdict = { scheduleId: number; scheduleName: string; rule: AlertRule; firing: boolean; details: AlertDetails };

/** The console page of one schedule, e.g. `http://localhost:3000/schedules/nightly-report`. */
export function scheduleUrl(publicUrl: string, name: string): string {
  return `${publicUrl.replace(/\/+$/, "")}/schedules/${encodeURIComponent(name)}`;
}

/** Turn one schedule's health into a verdict per rule; a deleted schedule breaks none (its alerts resolve). */
export function verdictsFor(
  schedule: { id: number; name: string; deleted: boolean },
  health: ScheduleHealth,
  publicUrl: string,
): RuleVerdict[] {
  const details: AlertDetails = {
    status: schedule.deleted ? "deleted" : health.status,
    sinceLastSuccessSeconds: round(health.sinceLastSuccessSeconds),
    deadRuns: health.deadRuns,
    oldestPendingAgeSeconds: round(health.oldestPendingAgeSeconds),
    lateAfterSeconds: health.lateAfterSeconds,
    backlogAfterSeconds: health.backlogAfterSeconds,
    ageSeconds: round(health.ageSeconds) ?? 0,
    unservedHandler: health.unservedHandler,
    unservedAfterSeconds: health.unservedAfterSeconds,
    stuckRun: health.stuckRun,
    url: scheduleUrl(publicUrl, schedule.name),
  };
  return ALERT_RULES.map((rule) => ({
    scheduleId: schedule.id,
    scheduleName: schedule.name,
    rule,
    firing: !schedule.deleted && health.rules[rule],
    details,
  }));
}

function round(n: number | null): number | null {
  return n === null ? null : Math.round(n * 1000) / 1000;
}
