/**
 * What makes an alert pass cost what changed, not the number of schedules. A pass evaluates only
 * the schedules that are due in `alert_watch`:
 *
 * - **Written since the last pass.** Triggers append a row to `alert_changes` for every statement
 *   that inserts or updates runs (tick, finish, retry, rescue, requeue, skips) or edits what a
 *   schedule's verdicts depend on (lib/db/sql/functions/runs_log_changes.sql,
 *   lib/db/sql/triggers/schedules_alert_changes_*.sql). The pass reads the log (`dueNow`) and
 *   deletes the rows it read only once every schedule they name is evaluated (`forgetChanges`), so
 *   a change is never lost: a pass that dies before then leaves them to the next. The log is not
 *   copied into `alert_watch`: 1 % of 2,000,000 schedules written would otherwise be 20,000 random
 *   rows of it rewritten, with their index entries, only to be rewritten again by the evaluation.
 * - **Whose instant has come.** After evaluating a schedule the pass stores the earliest instant at
 *   which one of its verdicts could change by time alone, with nothing written (`nextCheckAt`). A
 *   pass reads `alert_watch_check_idx` for the instants at or before its clock reading: with nothing
 *   changed and no instant passed, a pass reads no schedule at all.
 *
 * The claim and the heartbeat write run_queue alone and are not logged (they are the hot path).
 * What a claim can change is bounded by time instead: a claimed run starts no earlier than the
 * later of the pass's clock reading and its run_after, and no run is stuck sooner than
 * STUCK_MIN_AFTER_SECONDS after its start, so a schedule with a pending run is looked at again by
 * then. A claim can otherwise only resolve (backlogged, unserved), so a schedule on which either
 * holds is evaluated on every pass. A worker starting or stopping is not a schedule write either: a
 * schedule whose oldest pending run already waits past the unserved threshold is evaluated on every
 * pass until it is claimed, the handler's service being the one thing left to change.
 *
 * The other rules, once they hold, end only by a logged write: late by a success, failing by its
 * dead runs being retried or discarded, stuck by its run ending (finish, rescue, cancel), any of
 * them by an edit or a pause. So a schedule on which they fire is not looked at again for them; it
 * is looked at again by its next reminder (the earliest firing rule's last notification plus the
 * reminder interval) or by an instant of a rule that does not hold yet, whichever is first.
 *
 * Everything not covered above that could still move a verdict sooner (a cron's typical gap
 * changing across a daylight-saving shift, runs deleted by hand) is caught by MAX_WATCH_SECONDS:
 * every live schedule is evaluated at least once a day (between 12 and 24 hours after the last
 * time, by schedule, so that a fleet evaluated at once does not come due at once).
 *
 * A new schedule's row is made by the statement that makes the schedule, due at once. With each
 * evaluation the pass stores what it found (status, handler, the rules that hold, when the schedule
 * is overdue: `storeChecks`), and a trigger on alert_watch keeps schedule_counts and rule_counts
 * equal to those rows (lib/db/sql/functions/alert_watch_counts.sql). Since every change that can
 * move a status or a rule makes the schedule due by one of the ways above, the counts are the
 * fleet's as of the last pass (lib/health/status-counts.ts reads them).
 */
import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { parseIdList } from "../db/id-list";
import type { HealthStatus, ScheduleHealth } from "../health/schedule-health";
import { STUCK_MIN_AFTER_SECONDS, stuckAfterSql } from "../runs/stuck";
import { ALERT_RULES, type AlertRule } from "./rules";

type Tx = Pick<Db, "execute">;

/** A schedule is evaluated at least this often, whatever its instants say. */
export const MAX_WATCH_SECONDS = 86_400;
/**
 * A claim that began before the pass read the clock can commit after the pass read its pending run:
 * its start can precede the pass's reading by this much, so the stuck bound is moved earlier by it.
 */
export const CLAIM_SKEW_SECONDS = 5;

/** What the next instant is worked out from, beside the schedule's health. */
export type WatchInputs = {
  /** The earliest slot among the schedule's pending runs (due or not), or null. */
  firstPendingSlot: Date | null;
  /** The earliest run_after among its pending runs, or null. */
  firstPendingRunAfter: Date | null;
  /** The earliest start among its running attempts, or null. */
  firstStartedAt: Date | null;
  /** Its stuck threshold in seconds (lib/runs/stuck.ts), null when it has none; read only when a run runs. */
  stuckAfterSeconds: number | null;
};

/**
 * The earliest instant at which one of the schedule's verdicts could change with nothing written,
 * as judged at `now` from its health and its queued runs, or a reminder of a rule firing on it
 * falls due (`nextReminderAt`, null without one). Never before `now`: an instant already passed
 * that did not change the verdict (a run waiting past the unserved threshold while its handler is
 * served) means "at the next pass". A rule that holds contributes no instant of its own (it ends
 * only by a logged write: the module comment), except backlogged and unserved, which a claim or a
 * worker ends unlogged, so while either holds the schedule is looked at on every pass. Rounded down
 * to the millisecond: early is safe.
 */
export function nextCheckAt(now: Date, health: ScheduleHealth, w: WatchInputs, scheduleId = 0, nextReminderAt: Date | null = null): Date {
  const t = now.getTime();
  if (health.rules.backlogged || health.rules.unserved) return now;
  // The daily safety net is spread over its second half by schedule (a fixed fraction per id):
  // schedules evaluated together, as all are by the first pass, do not all come due together again.
  const spread = ((scheduleId * 0.6180339887498949) % 1) / 2;
  const candidates = [t + MAX_WATCH_SECONDS * 1000 * (0.5 + spread)];
  if (nextReminderAt !== null) candidates.push(nextReminderAt.getTime());
  if (health.status !== "paused") {
    const after = (at: Date | null, seconds: number | null) => {
      if (at !== null && seconds !== null && Number.isFinite(seconds)) candidates.push(at.getTime() + seconds * 1000);
    };
    // late: the last success (or the creation) plus the late threshold.
    if (health.lateAfterSeconds !== null && !health.rules.late) {
      candidates.push(t + (health.lateAfterSeconds - (health.sinceLastSuccessSeconds ?? health.ageSeconds)) * 1000);
    }
    // backlogged: the oldest pending slot plus the backlog threshold (a claim only postpones it).
    after(w.firstPendingSlot, health.backlogAfterSeconds);
    // unserved: a pending run's wait counts from its run_after.
    after(w.firstPendingRunAfter, health.unservedAfterSeconds);
    // stuck: a running attempt's start plus the threshold; a pending run, once claimed, no sooner
    // than its claim plus the smallest threshold there is.
    if (!health.rules.stuck) after(w.firstStartedAt, w.stuckAfterSeconds);
    if (w.firstPendingRunAfter !== null) {
      candidates.push(Math.max(t, w.firstPendingRunAfter.getTime()) + (STUCK_MIN_AFTER_SECONDS - CLAIM_SKEW_SECONDS) * 1000);
    }
  }
  return new Date(Math.max(t, Math.floor(Math.min(...candidates))));
}

/**
 * When each schedule's next reminder falls due: the earliest last notification among its firing
 * rules plus the interval. Only schedules with a firing rule appear; none with reminders off.
 */
export async function nextReminders(tx: Tx, ids: number[], reminderSeconds: number): Promise<Map<number, Date>> {
  const out = new Map<number, Date>();
  if (ids.length === 0 || reminderSeconds <= 0) return out;
  const r = await tx.execute<{ id: number; at: Date | string }>(sql`
    SELECT a.schedule_id AS id, min(a.last_notified_at) + make_interval(secs => ${reminderSeconds}) AS at
    FROM alert_states a WHERE a.firing AND a.schedule_id = ANY(${sql.param(ids)}::bigint[]) GROUP BY a.schedule_id`);
  for (const row of r.rows) out.set(Number(row.id), new Date(row.at));
  return out;
}

/** What a pass evaluates: the due schedules by id, and the log rows that named some of them. */
export type DueNow = { ids: number[]; logged: string[] };

/** The earliest instant in alert_watch: one probe of alert_watch_check_idx from its start. */
const earliestInstant = sql`(SELECT min(e.check_at) FROM alert_watch e)`;

/**
 * Once a pass has stored its pages: probe the earliest instant, so that the next pass's probe does
 * not walk what this one left. The instants it replaced because they had come are at or before its
 * clock reading, and every instant now stored is after it or at it, so their index entries lie
 * before the first live entry, their rows dead since the pages committed (a replaced instant that
 * had not come, of a schedule the log named, lies later, and is skipped by the scan that first
 * reaches it). An index scan that finds a row dead to every transaction marks its entry so, and
 * later scans skip it unread: this walk costs what the pass replaced, once, where the next pass,
 * idle, would otherwise pay it until a vacuum (docs/benchmarks.md, "The alert pass"). A
 * transaction older than the pass's commits, still open (a long report, a CREATE DATABASE anywhere
 * on the server), keeps those rows from being dead to every transaction: then the first scan after
 * it ends marks them instead.
 */
export async function settleInstants(db: Tx): Promise<void> {
  await db.execute(sql`SELECT ${earliestInstant} AS at`);
}

/**
 * The schedules due for evaluation at `at` (the pass's clock reading), by id: those named in the
 * change log and those whose instant in alert_watch has come; with the log rows read (their ctids),
 * for forgetChanges once they are evaluated. One statement, so the log and the instants are read in
 * one snapshot; ids and ctids come back in one row, not a row per schedule, the ids as one text
 * (a first pass reads every schedule: lib/db/id-list.ts).
 *
 * `at` is a value, not sk_now() in the statement: with a value the planner reads the instants'
 * statistics and walks alert_watch_check_idx for the few that have come. Given an expression it
 * knows nothing of, it assumes a third of the table and walks all of alert_watch in id order
 * instead (0.7 s at 2,000,000 schedules, for none due). The earliest instant is read first (one
 * index probe, a one-time filter): when none has come the scan is not run at all, so an idle pass
 * reads no watch row even while the statistics still describe the instants a pass just replaced.
 */
export async function dueNow(db: Tx, at: Date): Promise<DueNow> {
  const r = await db.execute<{ ids: string | null; logged: string[] | null }>(sql`
    WITH logged AS MATERIALIZED (SELECT ctid, schedule_ids FROM alert_changes)
    SELECT
      array_to_string(ARRAY(
        SELECT u.id FROM logged l, unnest(l.schedule_ids) AS u(id)
        UNION
        SELECT w.schedule_id FROM alert_watch w
        WHERE ${earliestInstant} <= ${at.toISOString()}::timestamptz AND w.check_at <= ${at.toISOString()}::timestamptz
        ORDER BY 1), ',') AS ids,
      ARRAY(SELECT l.ctid FROM logged l)::text[] AS logged`);
  const row = r.rows[0];
  return { ids: parseIdList(row?.ids ?? null), logged: row?.logged ?? [] };
}

/**
 * Delete the log rows a pass read (dueNow), once every schedule they name has been evaluated. Rows
 * appended since stay for the next pass. Only the pass deletes log rows, one pass at a time (its
 * lock), so a row read is still where it was.
 */
export async function forgetChanges(db: Tx, logged: string[]): Promise<void> {
  if (logged.length === 0) return;
  await db.execute(sql`DELETE FROM alert_changes WHERE ctid = ANY(${sql.param(logged)}::tid[])`);
}

/** The queued-run instants nextCheckAt needs, per schedule, each through a partial index on run_queue. */
export async function watchInputs(tx: Tx, ids: number[]): Promise<Map<number, WatchInputs>> {
  const out = new Map<number, WatchInputs>();
  if (ids.length === 0) return out;
  const r = await tx.execute<{ id: number; first_slot: Date | null; first_after: Date | null; first_started: Date | null; stuck_after: number | null }>(sql`
    SELECT s.id, pe.first_slot, pe.first_after, rn.first_started,
      CASE WHEN rn.first_started IS NOT NULL THEN ${stuckAfterSql("s")} END AS stuck_after
    FROM schedules s
    CROSS JOIN LATERAL (
      SELECT min(p.scheduled_for) AS first_slot, min(p.run_after) AS first_after
      FROM run_queue p WHERE p.schedule_id = s.id AND p.state = 'pending'
    ) pe
    CROSS JOIN LATERAL (
      SELECT min(p.started_at) AS first_started FROM run_queue p WHERE p.schedule_id = s.id AND p.state = 'running'
    ) rn
    WHERE s.id = ANY(${sql.param(ids)}::bigint[])`);
  const date = (d: Date | string | null) => (d === null ? null : new Date(d));
  for (const row of r.rows) {
    out.set(Number(row.id), {
      firstPendingSlot: date(row.first_slot),
      firstPendingRunAfter: date(row.first_after),
      firstStartedAt: date(row.first_started),
      stuckAfterSeconds: row.stuck_after === null ? null : Number(row.stuck_after),
    });
  }
  return out;
}

/**
 * When the schedule is, or will be, past the first of its late and backlog thresholds, as judged
 * at `now` (null when it has neither). How far past is `now` minus this, so ordering by it, earliest
 * first, is worst first within a status, and the order holds as time passes with nothing written.
 * Examples at 10:00: late after 630 s, last success 09:50 → 10:00:30; also a pending slot of 09:50
 * with a 300 s backlog threshold → 09:55.
 */
export function overdueAt(now: Date, h: ScheduleHealth): Date | null {
  const t = now.getTime();
  const at: number[] = [];
  if (h.lateAfterSeconds !== null) at.push(t + (h.lateAfterSeconds - (h.sinceLastSuccessSeconds ?? h.ageSeconds)) * 1000);
  if (h.backlogAfterSeconds !== null && h.oldestPendingAgeSeconds !== null) at.push(t + (h.backlogAfterSeconds - h.oldestPendingAgeSeconds) * 1000);
  return at.length === 0 ? null : new Date(Math.round(Math.min(...at)));
}

/** What a pass stores of one evaluated schedule: when to look again, and what it found. */
export type WatchedSchedule = { id: number; checkAt: Date; status: HealthStatus; handler: string; rules: AlertRule[]; overdueAt: Date | null };

/** What the pass stores for `schedule` evaluated at `now`, to look at it again at `checkAt`. */
export function watchedSchedule(schedule: { id: number; handler: string }, now: Date, h: ScheduleHealth, checkAt: Date): WatchedSchedule {
  return { id: schedule.id, checkAt, status: h.status, handler: schedule.handler, rules: ALERT_RULES.filter((r) => h.rules[r]), overdueAt: overdueAt(now, h) };
}

/**
 * Store each evaluated schedule's next instant and what the pass found (the counts by status
 * follow, by trigger); schedules no longer watched (deleted, or gone) leave the list, and the counts.
 * A row that would not change is not written.
 */
export async function storeChecks(tx: Tx, next: WatchedSchedule[], unwatched: number[]): Promise<void> {
  if (next.length > 0) {
    await tx.execute(sql`
      UPDATE alert_watch w SET check_at = x.at, status = x.status, handler = x.handler, rules = string_to_array(x.rules, ','), overdue_at = x.overdue
      FROM unnest(
        ${sql.param(next.map((n) => n.id))}::bigint[],
        ${sql.param(next.map((n) => n.checkAt.toISOString()))}::timestamptz[],
        ${sql.param(next.map((n) => n.status))}::health_status[],
        ${sql.param(next.map((n) => n.handler))}::text[],
        ${sql.param(next.map((n) => n.rules.join(",")))}::text[],
        ${sql.param(next.map((n) => n.overdueAt?.toISOString() ?? null))}::timestamptz[]
      ) AS x(id, at, status, handler, rules, overdue)
      WHERE w.schedule_id = x.id
        AND (w.check_at, w.status, w.handler, w.rules, w.overdue_at) IS DISTINCT FROM (x.at, x.status, x.handler, string_to_array(x.rules, ','), x.overdue)`);
  }
  if (unwatched.length > 0) {
    await tx.execute(sql`DELETE FROM alert_watch WHERE schedule_id = ANY(${sql.param(unwatched)}::bigint[])`);
  }
}

/** The database clock, read once at the start of a pass: the instant dueNow judges by, and what recordPass stores at its end. */
export async function passClock(db: Tx): Promise<Date> {
  const r = await db.execute<{ now: Date | string }>(sql`SELECT sk_now() AS now`);
  return new Date(r.rows[0].now);
}

/**
 * Record that a pass begun at `startedAt` (passClock, read before the log) has finished: every
 * write committed before then was read, and every instant up to then has come, so the counts are
 * at least that recent.
 */
export async function recordPass(db: Tx, startedAt: Date): Promise<void> {
  await db.execute(sql`
    INSERT INTO alert_pass (id, started_at) VALUES (1, ${startedAt.toISOString()}::timestamptz)
    ON CONFLICT (id) DO UPDATE SET started_at = excluded.started_at`);
}
