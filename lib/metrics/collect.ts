/**
 * The numbers behind GET /api/metrics: gauges read from the database at scrape time, so any web
 * process answers the same. What each worker did (claims, finishes, lateness histograms) is counted
 * in that worker and served on its own `/metrics` (lib/metrics/worker-metrics.ts).
 *
 * Bounded cardinality: by default every series is an aggregate (schedules by status and handler,
 * rules holding, runs by state), so a scrape has the same number of series with 10 schedules or 2
 * million. Per-schedule series are opt-in for a bounded set (SLOTKEEPER_METRICS_PER_SCHEDULE:
 * lib/metrics/per-schedule.ts).
 *
 * A scrape's cost does not grow with the fleet either:
 * - schedules by status and handler, and rules holding: the counts the alert pass keeps, as of its
 *   last pass, with the schedules made since counted apart (lib/health/status-counts.ts);
 * - per-schedule series: `tag:NAME` reads the tagged schedules' health (lib/health/schedule-health.ts,
 *   the console's and the alerts' reads and rules) in pages of HEALTH_PAGE_SIZE, `worst:N` walks
 *   alert_watch_worst_idx for the N worst as of the last pass and reads those N;
 * - runs by state: pending, running and dead exactly, through run_queue's partial indexes; done and
 *   skipped exactly while the table is small, and above ESTIMATE_ABOVE_ROWS the planner's row
 *   estimate (EXPLAIN), because an exact count(*) would scan the whole table on every scrape;
 * - workers alive and alert deliveries waiting or failed.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { getRunTotals } from "../health/overview";
import { getScheduleHealth, HEALTH_STATUSES, type HealthStatus, type ScheduleHealth } from "../health/schedule-health";
import { readStatusCounts } from "../health/status-counts";
import type { PerScheduleMetrics } from "./per-schedule";

/** Above this many rows (planner estimate), done/skipped counts come from statistics, not count(*). */
export const ESTIMATE_ABOVE_ROWS = 200_000;
/** Tagged schedules whose health is read per statement (`tag:NAME`). */
export const HEALTH_PAGE_SIZE = 2_000;

/** The rules counted by `slotkeeper_schedules_rule_holding` and reported per schedule: every alert rule. */
export const HEALTH_RULE_NAMES = ["late", "failing", "backlogged", "unserved", "stuck"] as const;

/** One schedule reported on its own (opt-in). */
export type ScheduleSeries = { name: string; enabled: boolean; health: ScheduleHealth };

export type MetricsSnapshot = {
  /** Evaluated live schedules by status and handler, as of the last alert pass (every status appears, with 0 when none). */
  schedulesByStatus: { status: HealthStatus; handler: string; count: number }[];
  /** How many evaluated live schedules broke each rule at the last alert pass. */
  rulesHolding: { rule: (typeof HEALTH_RULE_NAMES)[number]; count: number }[];
  /** Live schedules no alert pass has judged yet: in neither count above. */
  schedulesNotEvaluated: number;
  /** The database clock reading the counts are as of (the last finished alert pass); null before the first. */
  statusAsOf: Date | null;
  /** The schedules chosen by SLOTKEEPER_METRICS_PER_SCHEDULE; empty by default. */
  schedules: ScheduleSeries[];
  runs: { state: string; count: number; estimated: boolean }[];
  workersAlive: number;
  deliveries: { pending: number; failed: number };
};

export type CollectOptions = { estimateAboveRows?: number; perSchedule?: PerScheduleMetrics; pageSize?: number };

/** Read everything the metrics endpoint reports. */
export async function collectMetrics(db: Db, opts: CollectOptions = {}): Promise<MetricsSnapshot> {
  const [counts, schedules, totals, finished, deliveries] = await Promise.all([
    readStatusCounts(db),
    perScheduleSeries(db, opts.perSchedule ?? null, opts.pageSize ?? HEALTH_PAGE_SIZE),
    getRunTotals(db),
    finishedRunCounts(db, opts.estimateAboveRows ?? ESTIMATE_ABOVE_ROWS),
    deliveryCounts(db),
  ]);
  // Every status appears for some handler, so a status that empties reads 0 rather than vanishing.
  const byStatus = [...counts.byStatusHandler];
  for (const status of HEALTH_STATUSES) if (!byStatus.some((e) => e.status === status)) byStatus.push({ status, handler: "", count: 0 });
  return {
    schedulesByStatus: byStatus.sort((a, b) => a.status.localeCompare(b.status) || a.handler.localeCompare(b.handler)),
    rulesHolding: HEALTH_RULE_NAMES.map((rule) => ({ rule, count: counts.rulesHolding[rule] })),
    schedulesNotEvaluated: counts.notEvaluated,
    statusAsOf: counts.asOf,
    schedules: schedules.sort((a, b) => a.name.localeCompare(b.name)),
    runs: [
      { state: "pending", count: totals.pending, estimated: false },
      { state: "running", count: totals.running, estimated: false },
      { state: "dead", count: totals.dead, estimated: false },
      ...finished,
    ],
    workersAlive: totals.workersAlive,
    deliveries,
  };
}

type Picked = { id: number; name: string; enabled: boolean };

/**
 * The opted-in schedules with their health now: the tagged ones page by page (bounded by what the
 * operator tags), or the N worst as the last alert pass judged them (alert_watch_worst_idx: by
 * status, failing first, then by how long past its first threshold; a walk that stops after N).
 */
async function perScheduleSeries(db: Db, perSchedule: PerScheduleMetrics, pageSize: number): Promise<ScheduleSeries[]> {
  if (perSchedule === null) return [];
  if (perSchedule.kind === "worst") {
    const worst = await db.execute<Picked>(sql`
      SELECT s.id, s.name, s.enabled FROM alert_watch w JOIN schedules s ON s.id = w.schedule_id
      WHERE w.status IS NOT NULL AND s.deleted_at IS NULL
      ORDER BY w.status, w.overdue_at, w.schedule_id LIMIT ${perSchedule.count}`);
    return withHealth(db, worst.rows);
  }
  const out: ScheduleSeries[] = [];
  for (let after = 0; ; ) {
    const page = await db.execute<Picked>(sql`
      SELECT id, name, enabled FROM schedules
      WHERE deleted_at IS NULL AND tags @> ARRAY[${perSchedule.tag}]::text[] AND id > ${after} ORDER BY id LIMIT ${pageSize}`);
    if (page.rows.length === 0) return out;
    after = Number(page.rows[page.rows.length - 1].id);
    out.push(...(await withHealth(db, page.rows)));
  }
}

async function withHealth(db: Db, picked: Picked[]): Promise<ScheduleSeries[]> {
  const health = await healthWithoutJit(db, picked.map((s) => Number(s.id)));
  return picked.flatMap((s) => {
    const h = health.get(Number(s.id));
    return h ? [{ name: s.name, enabled: s.enabled, health: h }] : [];
  });
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

/** Alert deliveries still to send (partial index) and given up on. */
async function deliveryCounts(db: Db): Promise<{ pending: number; failed: number }> {
  const r = await db.execute<{ pending: number; failed: number }>(sql`
    SELECT (SELECT count(*) FROM alert_deliveries WHERE state = 'pending')::int AS pending,
           (SELECT count(*) FROM alert_deliveries WHERE state = 'failed')::int AS failed`);
  return r.rows[0];
}
