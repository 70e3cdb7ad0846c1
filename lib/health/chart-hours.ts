/**
 * The chart roll-up: chart_hours counts each schedule's runs by slot hour (the long chart windows
 * read it instead of the runs, lib/health/charts.ts). The statements that write runs only list the
 * hours they touched in chart_changes (a trigger, one small row per statement with its (schedule,
 * hour) pairs as arrays, no index);
 * this pass counts those hours again from runs, through runs_slot_key, and drains the list. With
 * the counts it writes chart_waits: how long each hour's finished runs had waited at each 7-day
 * sample they waited across (a finished run's wait no longer changes).
 *
 * Exact, not approximate: each chunk deletes the listed rows and writes the counts it read in one
 * statement, with one snapshot, so a write committed before it is counted and its row drained, and
 * one committed after leaves its row for the next chunk. One roll-up runs at a time (an advisory
 * lock): two with different snapshots could otherwise write an older count over a newer one. A
 * chart reads every hour still listed from runs, so it never shows a count the roll-up is behind on.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { CHART_WINDOWS } from "./charts";

/** The advisory lock that lets one roll-up run at a time. */
export const CHART_ROLLUP_LOCK_KEY = "slotkeeper:chart-hours";
/** The sample spacing of chart_waits: the 7-day window's bucket (its samples are the bucket ends). */
export const WAIT_SAMPLE_SECONDS = CHART_WINDOWS["7d"].bucketSeconds;
/**
 * Listed rows drained per statement, each chunk its own short transaction. A row is one writing
 * statement's pairs: a finish batch's 500 at most, a tick's more.
 */
export const CHART_ROLLUP_CHUNK = 20;

/**
 * A roll-up stops after the chunk that takes it to this many (schedule, hour) pairs (the rest wait
 * for the next call): it runs in the alert loop, and after the top of the hour (a run inserted and
 * finished per hourly schedule) an unbounded one would hold the next alert pass back. Charts stay
 * exact meanwhile.
 */
export const CHART_ROLLUP_MAX_PAIRS = 50_000;

/** Count listed hours again; returns the (schedule, hour) pairs drained (0 when another roll-up holds the lock). */
export async function rollUpChartHours(db: Db, maxPairs = CHART_ROLLUP_MAX_PAIRS): Promise<number> {
  const client = await db.$client.connect();
  let locked = false;
  try {
    locked = (await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock(hashtext($1)) AS ok", [CHART_ROLLUP_LOCK_KEY])).rows[0].ok;
    if (!locked) return 0;
    let total = 0;
    for (;;) {
      const r = await db.execute<{ n: number; pairs: number }>(sql`
        WITH d AS (
          DELETE FROM chart_changes WHERE ctid = ANY(ARRAY(SELECT ctid FROM chart_changes LIMIT ${CHART_ROLLUP_CHUNK}))
          RETURNING schedule_ids, hours
        ),
        fresh AS (
          SELECT k.schedule_id, k.hour, c.done, c.dead, c.skipped, c.waiting, c.last_done_at, c.runs
          FROM (SELECT DISTINCT u.schedule_id, u.hour FROM d, unnest(d.schedule_ids, d.hours) AS u(schedule_id, hour)) k
          CROSS JOIN LATERAL (
            SELECT count(*) FILTER (WHERE r.state = 'done')::int AS done, count(*) FILTER (WHERE r.state = 'dead')::int AS dead,
              coalesce(sum(coalesce(r.skipped_count, 1)) FILTER (WHERE r.state = 'skipped'), 0)::int AS skipped,
              count(*) FILTER (WHERE r.state = 'pending')::int AS waiting, max(r.finished_at) FILTER (WHERE r.state = 'done') AS last_done_at,
              count(*)::int AS runs
            FROM runs r WHERE r.schedule_id = k.schedule_id AND r.scheduled_for >= k.hour AND r.scheduled_for < k.hour + interval '1 hour'
          ) c
        ),
        kept AS (
          INSERT INTO chart_hours AS h (schedule_id, hour, done, dead, skipped, waiting, last_done_at)
          SELECT f.schedule_id, f.hour, f.done, f.dead, f.skipped, f.waiting, f.last_done_at FROM fresh f WHERE f.runs > 0 ORDER BY 1, 2
          ON CONFLICT (schedule_id, hour) DO UPDATE SET done = excluded.done, dead = excluded.dead, skipped = excluded.skipped,
            waiting = excluded.waiting, last_done_at = excluded.last_done_at
        ),
        emptied AS (
          DELETE FROM chart_hours h USING fresh f WHERE f.runs = 0 AND h.schedule_id = f.schedule_id AND h.hour = f.hour
        ),
        -- The waits of the hour's finished runs at each sample strictly between slot and start
        -- (its start, else its finish: what the chart calls the end of the wait). The hour's rows
        -- are upserted and the ones no longer there deleted: disjoint rows, as one statement needs.
        waits AS (
          SELECT f.schedule_id, f.hour, s.at AS sample_at, max(extract(epoch FROM s.at - r.scheduled_for))::float8 AS seconds
          FROM fresh f
          JOIN runs r ON r.schedule_id = f.schedule_id AND r.scheduled_for >= f.hour AND r.scheduled_for < f.hour + interval '1 hour' AND r.state IN ('done', 'dead')
          CROSS JOIN LATERAL generate_series(
            date_bin(make_interval(secs => ${WAIT_SAMPLE_SECONDS}), r.scheduled_for, timestamptz 'epoch') + make_interval(secs => ${WAIT_SAMPLE_SECONDS}),
            coalesce(r.started_at, r.finished_at, sk_now()) - interval '1 microsecond', make_interval(secs => ${WAIT_SAMPLE_SECONDS})) AS s(at)
          WHERE f.runs > 0
          GROUP BY 1, 2, 3
        ),
        kept_waits AS (
          INSERT INTO chart_waits AS w (schedule_id, hour, sample_at, seconds)
          SELECT * FROM waits ORDER BY 1, 2, 3
          ON CONFLICT (schedule_id, hour, sample_at) DO UPDATE SET seconds = excluded.seconds
        ),
        gone_waits AS (
          DELETE FROM chart_waits w USING (SELECT DISTINCT schedule_id, hour FROM fresh) f
          WHERE w.schedule_id = f.schedule_id AND w.hour = f.hour
            AND NOT EXISTS (SELECT 1 FROM waits x WHERE x.schedule_id = w.schedule_id AND x.hour = w.hour AND x.sample_at = w.sample_at)
        )
        SELECT count(*)::int AS n, coalesce(sum(cardinality(d.schedule_ids)), 0)::int AS pairs FROM d`);
      const rows = r.rows[0]?.n ?? 0;
      total += r.rows[0]?.pairs ?? 0;
      if (rows < CHART_ROLLUP_CHUNK || total >= maxPairs) return total;
    }
  } finally {
    // Unlock before the connection goes back to the pool; if that fails, close it (which unlocks).
    if (!locked) client.release();
    else {
      try {
        await client.query("SELECT pg_advisory_unlock(hashtext($1))", [CHART_ROLLUP_LOCK_KEY]);
        client.release();
      } catch (err) {
        client.release(err instanceof Error ? err : true);
      }
    }
  }
}
