/**
 * A schedule's health: the three numbers the monitoring section of the design article asks for
 * (since last success, dead runs, oldest pending age) and a status derived from them.
 *
 * - late: since-last-success exceeds two intervals (10 minutes on a 5-minute job), plus a grace
 *   for the poll interval and handler time; `late_after_seconds` replaces the whole threshold and
 *   `late_grace_seconds` the grace. This catches a stopped scheduler, which error alerts never see.
 * - failing: dead runs > 0 — a run exhausted its attempts and needs a person.
 * - backlogged: the oldest due pending run has waited longer than one interval (at least a
 *   minute; `backlog_after_seconds` overrides): workers are too few or too slow.
 * - unserved: no live worker serves the schedule's handler and its oldest due pending run has
 *   waited longer than the schedule's stated worst-case lateness (lib/schedules/lateness.ts): the
 *   run waits for a worker that has the handler (routing), not for a slot. Not a status of its own.
 * - paused: the schedule is disabled; its numbers are still reported.
 *
 * Ages are computed in SQL against sk_now() (one clock decides); only the threshold, which needs
 * the cron maths, is computed here. Each number is read through an index per schedule:
 * runs_slot_key (newest first) for the last success, run_queue_dead_idx for dead runs and
 * run_queue_pending_idx for the oldest slot still waiting — never a scan of the whole runs table.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { typicalGapSeconds, type Timing } from "../schedules/timing";
import { worstCaseLatenessSeconds } from "../schedules/lateness";
import { unservedSql, type UnservedHandler } from "../runs/unserved";

export type HealthStatus = "healthy" | "late" | "failing" | "backlogged" | "paused";

export type ScheduleHealth = {
  /** Seconds since the last run finished successfully; null when none has. */
  sinceLastSuccessSeconds: number | null;
  /** Runs in state dead (exhausted their attempts or failed for good). */
  deadRuns: number;
  /** Seconds the oldest due pending run has waited since its slot; null when none is waiting. */
  oldestPendingAgeSeconds: number | null;
  status: HealthStatus;
  /** The since-last-success threshold above which the schedule is late (Infinity → null). */
  lateAfterSeconds: number | null;
  /** The oldest-pending-age threshold above which the schedule is backlogged. */
  backlogAfterSeconds: number | null;
  /** Seconds since the schedule was created: what "late" is judged by when it never succeeded. */
  ageSeconds: number;
  /**
   * Set when no live worker serves the schedule's handler: the handler, and when its oldest due
   * pending run started waiting (null when none waits yet).
   */
  unservedHandler: UnservedHandler | null;
  /** The wait above which an unserved run breaks the unserved rule: the stated worst-case lateness. */
  unservedAfterSeconds: number;
  /** Which rules hold right now, each on its own (the status shows only the most urgent). */
  rules: HealthRules;
};

/** The three health rules, evaluated independently; alerts and metrics use these, the status orders them. */
export type HealthRules = { late: boolean; failing: boolean; backlogged: boolean; unserved: boolean };

/** Default slack on top of two intervals: covers a poll interval and a normal handler run. */
export const DEFAULT_LATE_GRACE_SECONDS = 30;
/** The smallest default backlog threshold: a pending run younger than this is normal. */
export const MIN_BACKLOG_AFTER_SECONDS = 60;

/** The schedule fields the thresholds depend on. */
export type HealthInputs = {
  enabled: boolean;
  cron: string | null;
  everySeconds: number | null;
  timezone: string;
  lateAfterSeconds: number | null;
  lateGraceSeconds: number | null;
  backlogAfterSeconds: number | null;
};

function timingOf(s: HealthInputs): Timing | null {
  if (s.everySeconds) return { everySeconds: s.everySeconds };
  if (s.cron) return { cron: s.cron, timezone: s.timezone };
  return null;
}

// Typical gaps of cron schedules at one instant, by expression and zone. Working one out walks the
// cron (croner) and was most of the worker's time in an alert pass; schedules share expressions
// ("0 * * * *"), and one health read uses one instant, so each is worked out once per read.
let gapsAt = Number.NaN;
const gaps = new Map<string, number>();

function gapSeconds(s: HealthInputs, now: Date): number {
  const timing = timingOf(s);
  if (!timing) return Number.POSITIVE_INFINITY;
  if (timing.cron === null || timing.cron === undefined) return typicalGapOrNever(timing, now);
  if (now.getTime() !== gapsAt) {
    gaps.clear();
    gapsAt = now.getTime();
  }
  const key = `${timing.timezone} ${timing.cron}`;
  let gap = gaps.get(key);
  if (gap === undefined) {
    gap = typicalGapOrNever(timing, now);
    gaps.set(key, gap);
  }
  return gap;
}

function typicalGapOrNever(timing: Timing, now: Date): number {
  try {
    return typicalGapSeconds(timing, now);
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/**
 * Late threshold: `late_after_seconds`, else 2 × the typical gap + grace. Examples: every 300 s →
 * 630 s; cron `0 * * * *` → 7,230 s; with late_grace_seconds 0 a 5-minute job is late after 600 s.
 */
export function lateAfterSecondsFor(s: HealthInputs, now: Date): number {
  if (s.lateAfterSeconds !== null) return s.lateAfterSeconds;
  return 2 * gapSeconds(s, now) + (s.lateGraceSeconds ?? DEFAULT_LATE_GRACE_SECONDS);
}

/** Backlog threshold: `backlog_after_seconds`, else max(one gap, 60 s). Every 300 s → 300 s. */
export function backlogAfterSecondsFor(s: HealthInputs, now: Date): number {
  if (s.backlogAfterSeconds !== null) return s.backlogAfterSeconds;
  return Math.max(gapSeconds(s, now), MIN_BACKLOG_AFTER_SECONDS);
}

type HealthNumbers = {
  enabled: boolean;
  sinceLastSuccessSeconds: number | null;
  ageSeconds: number;
  deadRuns: number;
  oldestPendingAgeSeconds: number | null;
  /** Seconds the oldest due pending run has waited with no live worker serving its handler; null when served or none waits. */
  unservedWaitSeconds?: number | null;
  /** The stated worst-case lateness: the unserved rule's threshold. */
  unservedAfterSeconds?: number;
};

/**
 * The one definition of late / failing / backlogged (console status, alerts and metrics all use
 * it). A schedule that never succeeded is judged by how long it has existed (`ageSeconds`), so a
 * new nightly job is not late on its first day but one that never once worked is. A paused
 * schedule breaks no rule: nobody expects it to run.
 */
export function evaluateHealthRules(n: HealthNumbers, lateAfterSeconds: number, backlogAfterSeconds: number): HealthRules {
  if (!n.enabled) return { late: false, failing: false, backlogged: false, unserved: false };
  return {
    unserved: n.unservedWaitSeconds != null && n.unservedAfterSeconds !== undefined && n.unservedWaitSeconds > n.unservedAfterSeconds,
    failing: n.deadRuns > 0,
    late: (n.sinceLastSuccessSeconds ?? n.ageSeconds) > lateAfterSeconds,
    backlogged: n.oldestPendingAgeSeconds !== null && n.oldestPendingAgeSeconds > backlogAfterSeconds,
  };
}

/** The status from the numbers, most urgent first: paused, failing, late, backlogged, healthy. */
export function deriveStatus(n: HealthNumbers, lateAfterSeconds: number, backlogAfterSeconds: number): HealthStatus {
  if (!n.enabled) return "paused";
  const rules = evaluateHealthRules(n, lateAfterSeconds, backlogAfterSeconds);
  if (rules.failing) return "failing";
  if (rules.late) return "late";
  if (rules.backlogged) return "backlogged";
  return "healthy";
}

type Row = {
  id: number;
  enabled: boolean;
  cron: string | null;
  every_seconds: number | null;
  timezone: string;
  late_after_seconds: number | null;
  late_grace_seconds: number | null;
  backlog_after_seconds: number | null;
  jitter_seconds: number;
  lease_seconds: number;
  handler: string;
  unserved: boolean;
  unserved_since: Date | null;
  unserved_wait: number | null;
  since_last_success: number | null;
  dead_runs: number;
  oldest_pending_age: number | null;
  age: number;
  now: Date;
};

/** Health for each of the given schedules (deleted ones included if asked for by id). */
export async function getScheduleHealth(db: Pick<Db, "execute">, scheduleIds: number[]): Promise<Map<number, ScheduleHealth>> {
  const out = new Map<number, ScheduleHealth>();
  if (scheduleIds.length === 0) return out;
  // The last success: the newest done runs by slot (runs_slot_key), then the latest finish
  // among a few of them, so a retried or backfilled slot finishing late still counts.
  // One clock reading for the whole read: sk_now() is a function PostgreSQL cannot inline, and
  // called bare it would run five times per schedule.
  const r = await db.execute<Row>(sql`
    SELECT s.id, s.enabled, s.cron, s.every_seconds, s.timezone,
      s.late_after_seconds, s.late_grace_seconds, s.backlog_after_seconds, s.jitter_seconds, s.lease_seconds, s.handler,
      un.unserved, CASE WHEN un.unserved THEN ow.run_after END AS unserved_since,
      CASE WHEN un.unserved THEN extract(epoch FROM c.now - ow.run_after)::float8 END AS unserved_wait,
      extract(epoch FROM c.now - ls.finished_at)::float8 AS since_last_success,
      (SELECT count(*) FROM run_queue d WHERE d.schedule_id = s.id AND d.state = 'dead')::int AS dead_runs,
      extract(epoch FROM c.now - op.scheduled_for)::float8 AS oldest_pending_age,
      greatest(0, extract(epoch FROM c.now - s.created_at))::float8 AS age,
      c.now
    FROM (SELECT sk_now() AS now OFFSET 0) c
    CROSS JOIN schedules s
    LEFT JOIN LATERAL (
      SELECT max(x.finished_at) AS finished_at FROM (
        SELECT r.finished_at FROM runs r
        WHERE r.schedule_id = s.id AND r.state = 'done'
        ORDER BY r.scheduled_for DESC NULLS LAST, r.slot_seq DESC NULLS LAST LIMIT 20) x
    ) ls ON true
    LEFT JOIN LATERAL (
      SELECT p.scheduled_for FROM run_queue p
      WHERE p.schedule_id = s.id AND p.state = 'pending' AND p.scheduled_for <= c.now
      ORDER BY p.scheduled_for LIMIT 1
    ) op ON true
    -- Routing: no live worker serves the handler, and the oldest due pending run (by slot) waits since its run_after.
    CROSS JOIN LATERAL (SELECT ${unservedSql(sql`s.handler`)} AS unserved) un
    LEFT JOIN LATERAL (
      SELECT p.run_after FROM run_queue p
      WHERE un.unserved AND p.schedule_id = s.id AND p.state = 'pending' AND p.run_after <= c.now
      ORDER BY p.scheduled_for LIMIT 1
    ) ow ON true
    WHERE s.id = ANY(${sql.param(scheduleIds)}::bigint[])`);
  for (const row of r.rows) {
    const inputs: HealthInputs = {
      enabled: row.enabled,
      cron: row.cron,
      everySeconds: row.every_seconds,
      timezone: row.timezone,
      lateAfterSeconds: row.late_after_seconds,
      lateGraceSeconds: row.late_grace_seconds,
      backlogAfterSeconds: row.backlog_after_seconds,
    };
    const now = new Date(row.now);
    const lateAfter = lateAfterSecondsFor(inputs, now);
    const backlogAfter = backlogAfterSecondsFor(inputs, now);
    const numbers = {
      enabled: row.enabled,
      sinceLastSuccessSeconds: row.since_last_success === null ? null : Math.max(0, row.since_last_success),
      ageSeconds: row.age,
      deadRuns: row.dead_runs,
      oldestPendingAgeSeconds: row.oldest_pending_age === null ? null : Math.max(0, row.oldest_pending_age),
      unservedWaitSeconds: row.unserved_wait === null ? null : Math.max(0, row.unserved_wait),
      unservedAfterSeconds: worstCaseLatenessSeconds({ jitterSeconds: row.jitter_seconds, leaseSeconds: row.lease_seconds }),
    };
    out.set(Number(row.id), {
      sinceLastSuccessSeconds: numbers.sinceLastSuccessSeconds,
      deadRuns: numbers.deadRuns,
      oldestPendingAgeSeconds: numbers.oldestPendingAgeSeconds,
      status: deriveStatus(numbers, lateAfter, backlogAfter),
      lateAfterSeconds: Number.isFinite(lateAfter) ? lateAfter : null,
      backlogAfterSeconds: Number.isFinite(backlogAfter) ? backlogAfter : null,
      ageSeconds: numbers.ageSeconds,
      unservedHandler: row.unserved ? { handler: row.handler, since: row.unserved_since ? new Date(row.unserved_since).toISOString() : null } : null,
      unservedAfterSeconds: numbers.unservedAfterSeconds,
      rules: evaluateHealthRules(numbers, lateAfter, backlogAfter),
    });
  }
  return out;
}
