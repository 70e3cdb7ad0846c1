/**
 * The numbers behind GET /api/metrics, read in a handful of bounded statements per scrape so a
 * Prometheus server can scrape every 15 s with thousands of schedules and millions of runs:
 *
 * - per schedule: the health numbers from lib/health/schedule-health.ts (the same reads, the
 *   same rules as the console and the alerts), each through a per-schedule index;
 * - runs by state: pending, running and dead exactly, through run_queue's partial indexes (the
 *   same counts as the Overview); done and skipped — the bulk of a 5M-row table — exactly while
 *   the table is small, and above ESTIMATE_ABOVE_ROWS the planner's row estimate (EXPLAIN, from
 *   the statistics autovacuum's ANALYZE keeps, early on runs: lib/db/sql/tables/runs.sql),
 *   because an exact count(*) would scan the whole table on every scrape;
 * - claim and start lateness of recently started runs, bucketed in SQL (the API process cannot
 *   see worker memory, so the histograms are derived from the rows);
 * - workers alive and alert deliveries waiting or failed.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { getOverviewTotals } from "../health/overview";
import { getScheduleHealth, type ScheduleHealth } from "../health/schedule-health";

/** Above this many rows (planner estimate), done/skipped counts come from statistics, not count(*). */
export const ESTIMATE_ABOVE_ROWS = 200_000;
/** Lateness histograms cover runs started in the last this many seconds. */
export const LATENESS_WINDOW_SECONDS = 300;
/** …whose slot lies within this window (plus the schedule's jitter): keeps the read on runs_slot_key. */
export const LATENESS_SLOT_WINDOW_SECONDS = 900;
/** Bucket upper bounds (seconds) of both lateness histograms. */
export const LATENESS_BUCKETS = [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900];

export type LatenessHistogram = { buckets: number[]; counts: number[]; count: number; sum: number };

export type MetricsSnapshot = {
  schedules: { name: string; enabled: boolean; health: ScheduleHealth }[];
  runs: { state: string; count: number; estimated: boolean }[];
  claimLateness: LatenessHistogram;
  startLateness: LatenessHistogram;
  workersAlive: number;
  deliveries: { pending: number; failed: number };
};

/** Read everything the metrics endpoint reports. */
export async function collectMetrics(db: Db, opts: { estimateAboveRows?: number } = {}): Promise<MetricsSnapshot> {
  const live = await db.execute<{ id: number; name: string; enabled: boolean }>(sql`
    SELECT id, name, enabled FROM schedules WHERE deleted_at IS NULL ORDER BY name`);
  const [health, totals, finished, lateness, deliveries] = await Promise.all([
    healthWithoutJit(db, live.rows.map((s) => Number(s.id))),
    getOverviewTotals(db),
    finishedRunCounts(db, opts.estimateAboveRows ?? ESTIMATE_ABOVE_ROWS),
    latenessHistograms(db),
    deliveryCounts(db),
  ]);
  return {
    schedules: live.rows.flatMap((s) => {
      const h = health.get(Number(s.id));
      return h ? [{ name: s.name, enabled: s.enabled, health: h }] : [];
    }),
    runs: [
      { state: "pending", count: totals.pending, estimated: false },
      { state: "running", count: totals.running, estimated: false },
      { state: "dead", count: totals.dead, estimated: false },
      ...finished,
    ],
    ...lateness,
    workersAlive: totals.workersAlive,
    deliveries,
  };
}

/**
 * The health read is thousands of small index probes whose summed cost estimate trips JIT; its
 * compile time exceeds what it saves, so it is off for this read.
 */
function healthWithoutJit(db: Db, ids: number[]) {
  return db.transaction(async (tx) => {
    await tx.execute(sql`SET LOCAL jit = off`);
    return getScheduleHealth(tx, ids);
  });
}

/** done and skipped: exact on a small table, from planner statistics on a big one. */
async function finishedRunCounts(db: Db, estimateAboveRows: number): Promise<MetricsSnapshot["runs"]> {
  const size = await db.execute<{ reltuples: number }>(sql`SELECT reltuples::float8 AS reltuples FROM pg_class WHERE oid = 'runs'::regclass`);
  const reltuples = size.rows[0]?.reltuples ?? -1; // -1: never analysed, so small or brand new
  const states = ["done", "skipped"];
  let rows: { state: string; n: number }[];
  const estimated = reltuples >= 0 && reltuples >= estimateAboveRows;
  if (!estimated) {
    const r = await db.execute<{ state: string; n: number }>(sql`
      SELECT state::text AS state, count(*)::float8 AS n FROM runs WHERE state IN ('done', 'skipped') GROUP BY state`);
    rows = r.rows;
  } else {
    // Ask the planner: EXPLAIN only plans, so this costs microseconds however big the table is,
    // and its row estimate handles common and rare states alike from the ANALYZE statistics.
    rows = [];
    for (const state of states) {
      const plan = await db.execute<{ "QUERY PLAN": [{ Plan: { "Plan Rows": number } }] }>(
        sql`EXPLAIN (FORMAT JSON) SELECT 1 FROM runs WHERE state = ${state}::run_state`,
      );
      rows.push({ state, n: plan.rows[0]["QUERY PLAN"][0].Plan["Plan Rows"] });
    }
  }
  return states.map((state) => ({ state, count: Number(rows.find((x) => x.state === state)?.n ?? 0), estimated }));
}

/**
 * Claim lateness: started_at − run_after, how long a claimable run waited for a worker (every
 * claim, retries included). Start lateness: started_at − due_at on first attempts, how late the
 * slot began as its owner sees it. Recent slots per schedule are read through runs_slot_key.
 */
async function latenessHistograms(db: Db): Promise<{ claimLateness: LatenessHistogram; startLateness: LatenessHistogram }> {
  const bounds = sql.param(LATENESS_BUCKETS);
  const r = await db.execute<{ metric: "claim" | "start"; bucket: number; n: number; total: number }>(sql`
    WITH recent AS (
      SELECT extract(epoch FROM r.started_at - r.run_after)::float8 AS claim,
        CASE WHEN r.attempts = 1 THEN extract(epoch FROM r.started_at - r.due_at)::float8 END AS start
      FROM schedules s
      JOIN LATERAL (
        SELECT r.started_at, r.run_after, r.due_at, r.attempts FROM run_status r
        WHERE r.schedule_id = s.id
          AND r.scheduled_for >= (SELECT sk_now()) - make_interval(secs => ${LATENESS_SLOT_WINDOW_SECONDS} + s.jitter_seconds)
          AND r.started_at >= (SELECT sk_now()) - make_interval(secs => ${LATENESS_WINDOW_SECONDS})
        -- OFFSET 0 keeps this a per-schedule index range scan on runs_slot_key; flattened,
        -- the planner prefers a hash join over a sequential scan of all runs.
        OFFSET 0
      ) r ON true
    ),
    observed AS (
      SELECT 'claim' AS metric, greatest(claim, 0) AS x FROM recent
      UNION ALL
      SELECT 'start', greatest(start, 0) FROM recent WHERE start IS NOT NULL
    )
    -- width_bucket(x, bounds) counts the bounds <= x; Prometheus' "le" is inclusive, so a value
    -- equal to a bound belongs to that bound's bucket, one lower.
    SELECT metric,
      width_bucket(x, ${bounds}::float8[]) - CASE WHEN x = ANY(${bounds}::float8[]) THEN 1 ELSE 0 END AS bucket,
      count(*)::int AS n, sum(x)::float8 AS total
    FROM observed GROUP BY 1, 2`);
  const build = (metric: "claim" | "start"): LatenessHistogram => {
    const perBucket = new Array<number>(LATENESS_BUCKETS.length + 1).fill(0); // last: above every bound (+Inf only)
    let sum = 0;
    for (const row of r.rows.filter((x) => x.metric === metric)) {
      perBucket[row.bucket] += row.n;
      sum += row.total;
    }
    let running = 0;
    const counts = LATENESS_BUCKETS.map((_, i) => (running += perBucket[i]));
    return { buckets: LATENESS_BUCKETS, counts, count: running + perBucket[LATENESS_BUCKETS.length], sum };
  };
  return { claimLateness: build("claim"), startLateness: build("start") };
}

/** Alert deliveries still to send (partial index) and given up on. */
async function deliveryCounts(db: Db): Promise<{ pending: number; failed: number }> {
  const r = await db.execute<{ pending: number; failed: number }>(sql`
    SELECT (SELECT count(*) FROM alert_deliveries WHERE state = 'pending')::int AS pending,
           (SELECT count(*) FROM alert_deliveries WHERE state = 'failed')::int AS failed`);
  return r.rows[0];
}
