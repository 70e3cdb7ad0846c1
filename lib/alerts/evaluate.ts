/**
 * The alert evaluation pass, run by every worker every few seconds so alerts fire with no browser
 * open. It evaluates only the schedules written since the last pass or whose next-change instant
 * has come (lib/alerts/watch.ts): its cost follows what changed, not the number of schedules.
 * Exactly one notification per transition, however many workers evaluate at once:
 *
 * 1. `pg_try_advisory_lock` lets one worker evaluate at a time; the others skip this pass.
 *    Health is read inside the lock, so evaluations are sequential and never race with stale views.
 * 2. The transition itself is `INSERT … ON CONFLICT DO UPDATE … WHERE firing IS DISTINCT FROM
 *    excluded.firing RETURNING`: the row lock lets exactly one statement see a change, so even
 *    without (1) two evaluators could not both report it.
 * 3. The alert event and one delivery per enabled channel are inserted by the same statement, so a
 *    transition is recorded and queued together or not at all. Sending happens elsewhere
 *    (lib/alerts/deliveries.ts), outside this transaction.
 *
 * Each evaluated schedule's status, handler and rules are stored with its watch row, in the same
 * transaction as its verdicts; the counts by status that the Overview and the metrics read follow
 * by trigger (lib/alerts/watch.ts), and a finished pass records the clock reading they are as of.
 *
 * Every "since" and reminder comparison reads sk_now(): one clock decides. The statements below
 * write it `(SELECT sk_now())`, an InitPlan read once per statement: a bare call runs once per row.
 */
import { sql } from "drizzle-orm";
import type { PoolClient } from "pg";
import type { Db } from "../db/client";
import { isDeadlock } from "../db/sql-errors";
import { getScheduleHealthAt } from "../health/schedule-health";
import { applyLastSuccessChanges } from "../schedules/last-success";
import { verdictsFor, type RuleVerdict } from "./rules";
import { vacuumWatchAfter } from "./watch-vacuum";
import { dueNow, forgetChanges, nextCheckAt, nextReminders, passClock, recordPass, settleInstants, storeChecks, watchedSchedule, watchInputs, type WatchedSchedule } from "./watch";

export type EvaluateOptions = {
  /** Base URL of the console, for the link in each notification. */
  publicUrl: string;
  /** Repeat a firing alert this often while it stays bad; 0 turns reminders off. */
  reminderSeconds: number;
};

/** `checked`: the schedules this pass read (what changed or came due, not the fleet). */
export type EvaluateResult = { evaluated: boolean; firing: number; resolved: number; reminders: number; checked: number };

type Tx = Pick<Db, "execute">;

/** Schedules evaluated per page: bounds the memory of a pass whatever the number of schedules. */
export const EVALUATE_PAGE_SIZE = 2_000;

/**
 * Pages evaluated at once, each in its own transaction on its own connection. Pages hold disjoint
 * schedules, so they share no alert_states or alert_watch row; most of a page's time is its
 * backend's, so two pages keep two cores of the database busy where one page at a time kept one.
 */
export const EVALUATE_LANES = 2;

/** The advisory lock that lets one evaluator run at a time (the benchmark watches for it too). */
export const ALERTS_LOCK_KEY = "slotkeeper:alerts";

/**
 * One evaluation pass: detect transitions and due reminders, record events and queue deliveries.
 *
 * One evaluator at a time: a session-level advisory lock on a connection held for the pass (a
 * crashed worker's session ends and frees it). The due schedules are evaluated in pages by id, each
 * with its verdicts and its next instants (alert_watch) in one short transaction: one
 * transaction over every page would hold PostgreSQL's xmin back for the whole pass, and a pass that
 * overlaps the top of the hour would keep the index entries of claimed runs from being cleaned,
 * which slows every claim of the spike. Verdicts are per schedule and every page compares with the
 * stored state, so pages need no common snapshot.
 */
export async function evaluateAlerts(db: Db, opts: EvaluateOptions & { pageSize?: number; vacuumMinRows?: number }): Promise<EvaluateResult> {
  const lockClient = await db.$client.connect();
  let locked = false;
  try {
    const lock = await lockClient.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock(hashtext($1)) AS ok`, [ALERTS_LOCK_KEY]);
    locked = lock.rows[0].ok;
    if (!locked) return { evaluated: false, firing: 0, resolved: 0, reminders: 0, checked: 0 };
    const result: EvaluateResult = { evaluated: true, firing: 0, resolved: 0, reminders: 0, checked: 0 };
    // Only what changed or came due (lib/alerts/watch.ts): the schedules the log names and those
    // whose instant has passed, by id, a page at a time. The clock is read first: once every page
    // is stored, the counts by status are the fleet's as of that reading.
    const startedAt = await passClock(db);
    // The successes logged since the last pass raise the stored last success first (a health read
    // adds any logged after this: lib/schedules/last-success.ts).
    await applyLastSuccessChanges(db);
    const { ids: due, logged } = await dueNow(db, startedAt);
    const pageSize = opts.pageSize ?? EVALUATE_PAGE_SIZE;
    const pageStarts = Array.from({ length: Math.ceil(due.length / pageSize) }, (_, k) => k * pageSize);
    await inLanes(pageStarts, EVALUATE_LANES, (i) => evaluatePage(db, due.slice(i, i + pageSize), opts, result));
    // Every schedule the log rows named is evaluated and stored: only now may they go.
    await forgetChanges(db, logged);
    await recordPass(db, startedAt);
    // A pass that rewrote a large share of alert_watch vacuums it (which also clears what
    // settleInstants would walk); any other pass settles the instants it replaced.
    if (due.length > 0 && !(await vacuumWatchAfter(db, due.length, opts.vacuumMinRows))) await settleInstants(db);
    return result;
  } finally {
    await releaseLock(lockClient, locked);
  }
}

/**
 * Unlock before the connection goes back to the pool. Closing the session instead released the
 * lock only once the server had ended that backend, after the close returned: a pass started right
 * after (the next worker, or a test) could find the lock still held and skip. If the unlock itself
 * fails the session is closed, which releases it in the end.
 */
async function releaseLock(client: PoolClient, locked: boolean): Promise<void> {
  if (!locked) return client.release();
  try {
    await client.query(`SELECT pg_advisory_unlock(hashtext($1))`, [ALERTS_LOCK_KEY]);
    client.release();
  } catch (err) {
    client.release(err instanceof Error ? err : true);
  }
}

/**
 * Evaluate one page of due schedules in one transaction: read their health, record transitions and
 * reminders, and store each one's next instant with what was found.
 */
async function evaluatePage(db: Db, ids: number[], opts: EvaluateOptions, result: EvaluateResult): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await evaluatePageOnce(db, ids, opts, result);
    } catch (err) {
      // Two pages' count updates can deadlock only when both also delete watch rows (the counts
      // are locked in key order within a statement, not across a page's two statements). The
      // victim's transaction rolled back whole, and it had added nothing to `result`.
      if (attempt >= 3 || !isDeadlock(err)) throw err;
    }
  }
}

async function evaluatePageOnce(db: Db, ids: number[], opts: EvaluateOptions, result: EvaluateResult): Promise<void> {
  const counts = { firing: 0, resolved: 0, reminders: 0, checked: 0 };
  await db.transaction(async (tx) => {
    // The health read is thousands of small index probes; its summed cost estimate trips JIT,
    // whose compile time exceeds what it saves here.
    await tx.execute(sql`SET LOCAL jit = off`);
    const page = await scheduleRefs(tx, ids);
    counts.checked = page.length;
    const { at, health } = await getScheduleHealthAt(tx, page.map((s) => s.id));
    const verdicts = page.flatMap((s) => {
      const h = health.get(s.id);
      return h ? verdictsFor(s, h, opts.publicUrl) : [];
    });
    const transitions = await recordTransitions(tx, verdicts);
    counts.firing = transitions.firing;
    counts.resolved = transitions.resolved;
    if (opts.reminderSeconds > 0) counts.reminders = await recordReminders(tx, verdicts, opts.reminderSeconds);
    // The next instant of each schedule, with what was found; a deleted one has just resolved
    // whatever fired, and leaves the list.
    const inputs = await watchInputs(tx, page.map((s) => s.id));
    const firing = [...new Set(verdicts.filter((v) => v.firing).map((v) => v.scheduleId))];
    const reminders = await nextReminders(tx, firing, opts.reminderSeconds);
    const next: WatchedSchedule[] = [];
    const unwatched = new Set(ids);
    for (const s of page) {
      const h = health.get(s.id);
      const w = inputs.get(s.id);
      if (s.deleted || !h || !w || at === null) continue;
      unwatched.delete(s.id);
      next.push(watchedSchedule(s, at, h, nextCheckAt(at, h, w, s.id, reminders.get(s.id) ?? null)));
    }
    await storeChecks(tx, next, [...unwatched]);
  });
  // Counted once the page has committed.
  result.firing += counts.firing;
  result.resolved += counts.resolved;
  result.reminders += counts.reminders;
  result.checked += counts.checked;
}

/**
 * Run `work` on every item, `lanes` at a time, each lane taking the next item when it is done.
 * Settles only once no item is in flight: a failed item stops the lanes taking more, and the
 * first failure is thrown after the others have ended, so nothing runs on once the caller's lock
 * is released.
 */
async function inLanes<T>(items: T[], lanes: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  const lane = async () => {
    while (!failed && next < items.length) {
      const item = items[next++];
      try {
        await work(item);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  const settled = await Promise.allSettled(Array.from({ length: Math.min(lanes, items.length) }, lane));
  const rejected = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (rejected) throw rejected.reason;
}

type ScheduleRef = { id: number; name: string; handler: string; deleted: boolean };

/** The due schedules that still exist, with their names, handlers and whether they were deleted. */
async function scheduleRefs(tx: Tx, ids: number[]): Promise<ScheduleRef[]> {
  const r = await tx.execute<{ id: number; name: string; handler: string; deleted: boolean }>(sql`
    SELECT s.id, s.name, s.handler, s.deleted_at IS NOT NULL AS deleted FROM schedules s WHERE s.id = ANY(${sql.param(ids)}::bigint[]) ORDER BY s.id`);
  return r.rows.map((s) => ({ id: Number(s.id), name: s.name, handler: s.handler, deleted: s.deleted }));
}

/**
 * The verdicts as an `input` relation: one JSON text, read by jsonb_to_recordset. Not one array
 * per column: the driver escapes every element of a text array, quotes and backslashes of each
 * verdict's details included, which cost more than the statement's own work on a page of 2,000.
 */
function inputRelation(verdicts: RuleVerdict[]) {
  const rows = verdicts.map((v) => ({ schedule_id: v.scheduleId, schedule_name: v.scheduleName, rule: v.rule, firing: v.firing, details: v.details }));
  return sql`
    SELECT i.schedule_id, i.schedule_name, i.rule, i.firing, i.details
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS i(schedule_id bigint, schedule_name text, rule text, firing boolean, details jsonb)`;
}

/**
 * Queue one delivery per enabled channel for the events the `events` CTE inserted. A channel with
 * tags hears only the schedules carrying one of them (the team that owns the job); a channel
 * without tags hears every schedule.
 */
const queueDeliveries = sql`
  deliveries AS (
    INSERT INTO alert_deliveries (event_id, channel_id, next_attempt_at)
    SELECT e.id, c.id, (SELECT sk_now()) FROM events e CROSS JOIN alert_channels c
    WHERE c.enabled AND (c.tags = '{}' OR c.tags && (SELECT s.tags FROM schedules s WHERE s.id = e.schedule_id))
  )`;

/**
 * Only a firing verdict or a verdict on a rule that is firing now can change anything: keep those.
 * In a healthy fleet that is next to none, so a page does not send three verdicts per schedule,
 * with their details, to the database to be compared with the stored states.
 */
async function thatCanChange(tx: Tx, verdicts: RuleVerdict[]): Promise<RuleVerdict[]> {
  const ids = [...new Set(verdicts.filter((v) => !v.firing).map((v) => v.scheduleId))];
  if (ids.length === 0) return verdicts;
  const r = await tx.execute<{ schedule_id: number; rule: string }>(sql`
    SELECT schedule_id, rule FROM alert_states WHERE firing AND schedule_id = ANY(${sql.param(ids)}::bigint[])`);
  const firingNow = new Set(r.rows.map((x) => `${x.schedule_id}:${x.rule}`));
  return verdicts.filter((v) => v.firing || firingNow.has(`${v.scheduleId}:${v.rule}`));
}

async function recordTransitions(tx: Tx, all: RuleVerdict[]): Promise<{ firing: number; resolved: number }> {
  const verdicts = await thatCanChange(tx, all);
  if (verdicts.length === 0) return { firing: 0, resolved: 0 };
  const r = await tx.execute<{ kind: "firing" | "resolved"; n: number }>(sql`
    WITH input AS (${inputRelation(verdicts)}),
    -- Each verdict with the state it finds. One relation joined to the stored states by their key,
    -- then joined once more below: the planner cannot count jsonb_to_recordset's rows, and had
    -- joined a second CTE of the stored states to the events row by row (2,000 x 2,000 a page).
    prev AS (
      SELECT i.schedule_id, i.schedule_name, i.rule, i.firing, i.details, a.firing AS was_firing, a.since AS was_since
      FROM input i LEFT JOIN alert_states a ON a.schedule_id = i.schedule_id AND a.rule = i.rule
    ),
    changed AS (
      INSERT INTO alert_states AS a (schedule_id, rule, firing, since, last_notified_at)
      SELECT p.schedule_id, p.rule, p.firing, (SELECT sk_now()), (SELECT sk_now())
      FROM prev p
      -- A healthy rule with no firing state has nothing to resolve: only a bad rule writes a row.
      WHERE p.firing OR p.was_firing
      ON CONFLICT (schedule_id, rule) DO UPDATE
        SET firing = excluded.firing, since = excluded.since, last_notified_at = excluded.last_notified_at
        -- The row lock lets exactly one writer see the change; any other updates nothing.
        WHERE a.firing IS DISTINCT FROM excluded.firing
      RETURNING a.schedule_id, a.rule, a.firing
    ),
    events AS (
      INSERT INTO alert_events (schedule_id, schedule_name, rule, kind, at, details)
      SELECT c.schedule_id, p.schedule_name, c.rule,
        CASE WHEN c.firing THEN 'firing' ELSE 'resolved' END, (SELECT sk_now()),
        p.details || jsonb_build_object('firingSince', CASE WHEN c.firing THEN (SELECT sk_now()) ELSE p.was_since END)
      FROM changed c
      JOIN prev p ON p.schedule_id = c.schedule_id AND p.rule = c.rule
      RETURNING id, kind, schedule_id
    ),
    ${queueDeliveries}
    SELECT kind, count(*)::int AS n FROM events GROUP BY kind`);
  const count = (k: string) => r.rows.find((x) => x.kind === k)?.n ?? 0;
  return { firing: count("firing"), resolved: count("resolved") };
}

async function recordReminders(tx: Tx, verdicts: RuleVerdict[], reminderSeconds: number): Promise<number> {
  if (!verdicts.some((v) => v.firing)) return 0;
  const r = await tx.execute<{ n: number }>(sql`
    WITH input AS (${inputRelation(verdicts.filter((v) => v.firing))}),
    reminded AS (
      -- Still bad and not notified for a reminder interval. The row lock again makes one writer win.
      UPDATE alert_states a SET last_notified_at = (SELECT sk_now())
      FROM input i
      WHERE a.schedule_id = i.schedule_id AND a.rule = i.rule AND a.firing
        AND a.last_notified_at <= (SELECT sk_now()) - make_interval(secs => ${reminderSeconds})
      RETURNING a.schedule_id, a.rule, a.since, i.schedule_name, i.details
    ),
    events AS (
      INSERT INTO alert_events (schedule_id, schedule_name, rule, kind, at, details)
      SELECT m.schedule_id, m.schedule_name, m.rule, 'reminder', (SELECT sk_now()), m.details || jsonb_build_object('firingSince', m.since)
      FROM reminded m
      RETURNING id, schedule_id
    ),
    ${queueDeliveries}
    SELECT count(*)::int AS n FROM events`);
  return r.rows[0]?.n ?? 0;
}
