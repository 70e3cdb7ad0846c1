/**
 * The schedule form's live preview: the next fire times of a cron expression (in its zone) or
 * an interval, and a sentence saying what it means. Pure: the caller passes "now" (the database
 * clock), so the preview agrees with what the tick will do.
 */
import { z } from "zod";
import { SCHEDULE_DEFAULTS } from "../schedules/defaults";
import { CronError, describeCron } from "../schedules/cron";
import { nextSlots, type Timing } from "../schedules/timing";

export type TimingPreviewInput = { cron?: string | null; everySeconds?: string | number | null; timezone?: string | null; count?: string | number | null };
export const previewErrorSchema = z.object({ code: z.literal("validation"), message: z.string(), field: z.string() }).strict();
export type PreviewError = z.infer<typeof previewErrorSchema>;
export const timingPreviewSchema = z.object({ nextFireTimes: z.array(z.string()), error: previewErrorSchema.optional() }).strict();
export type TimingPreview = z.infer<typeof timingPreviewSchema>;
/** GET /api/timing/preview's answer: the preview and a sentence describing the timing (null when it is invalid). */
export const timingPreviewAnswerSchema = timingPreviewSchema.extend({ description: z.string().nullable() }).strict();

const MAX_COUNT = 20;

function fail(field: string, message: string): TimingPreview {
  return { nextFireTimes: [], error: { code: "validation", message, field } };
}

function parseInput(input: TimingPreviewInput): Timing | PreviewError {
  const cron = input.cron?.trim() ?? "";
  const every = input.everySeconds === null || input.everySeconds === undefined || input.everySeconds === "" ? null : Number(input.everySeconds);
  const timezone = input.timezone?.trim() || SCHEDULE_DEFAULTS.timezone;
  if (cron && every !== null) return { code: "validation", message: "give either cron or everySeconds, not both", field: "cron" };
  if (every !== null) {
    if (!Number.isInteger(every) || every < 1) return { code: "validation", message: "everySeconds must be a whole number of seconds, at least 1", field: "everySeconds" };
    return { everySeconds: every, timezone };
  }
  if (!cron) return { code: "validation", message: "give a cron expression or everySeconds", field: "cron" };
  return { cron, timezone };
}

/** `count` (default 5, at most 20) next slots strictly after `now`, as ISO strings. */
export function previewTiming(input: TimingPreviewInput, now: Date): TimingPreview {
  const timing = parseInput(input);
  if ("code" in timing) return { nextFireTimes: [], error: timing };
  const count = Math.min(Math.max(Number(input.count ?? 5) || 5, 1), MAX_COUNT);
  try {
    return { nextFireTimes: nextSlots(timing, now, count).map((d) => d.toISOString()) };
  } catch (err) {
    if (err instanceof CronError) return fail(err.field, err.message);
    if (err instanceof RangeError || err instanceof TypeError) return fail("cron", err.message);
    throw err;
  }
}

/** "Every 5 minutes", "At 02:00 AM (Europe/London)"; null when the input does not parse. */
export function describeTiming(input: TimingPreviewInput): string | null {
  const timing = parseInput(input);
  if ("code" in timing) return null;
  if (timing.everySeconds) return describeEvery(timing.everySeconds);
  try {
    return `${describeCron(timing.cron!)} (${timing.timezone ?? SCHEDULE_DEFAULTS.timezone})`;
  } catch {
    return null;
  }
}

/** 300 → "Every 5 minutes"; 90 → "Every 90 seconds"; 1 → "Every second". */
export function describeEvery(seconds: number): string {
  const units: [number, string][] = [[86_400, "day"], [3_600, "hour"], [60, "minute"], [1, "second"]];
  for (const [size, unit] of units) {
    if (seconds % size === 0) {
      const n = seconds / size;
      return n === 1 ? `Every ${unit}` : `Every ${n} ${unit}s`;
    }
  }
  return `Every ${seconds} seconds`;
}
