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
 * - schedule health: lib/health/schedule-health.ts (the same reads and rules as the console and the
 *   alerts), read in pages of HEALTH_PAGE_SIZE so the web process holds one page at a time;
 * - runs by state: pending, running and dead exactly, through run_queue's partial indexes; done and
 *   skipped exactly while the table is small, and above ESTIMATE_ABOVE_ROWS the planner's row
 *   estimate (EXPLAIN), because an exact count(*) would scan the whole table on every scrape;
 * - workers alive and alert deliveries waiting or failed.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { getOverviewTotals } from "../health/overview";
import { getScheduleHealth, HEALTH_STATUSES, type HealthStatus, type ScheduleHealth } from "../health/schedule-health";
import type { PerScheduleMetrics } from "./per-schedule";

/** Above this many rows (planner estimate), done/skipped counts come from statistics, not count(*). */
export const ESTIMATE_ABOVE_ROWS = 200_000;
/** Schedules whose health is read per statement. */
export const HEALTH_PAGE_SIZE = 2_000;

/** The rules counted by `slotkeeper_schedules_rule_holding` and reported per schedule: every alert rule. */
export const HEALTH_RULE_NAMES = ["late", "failing", "backlogged", "unserved", "stuck"] as const;

/** One schedule reported on its own (opt-in). */
export type ScheduleSeries = { name: string; enabled: boolean; health: ScheduleHealth };

export type MetricsSnapshot = {
  /** Live schedules by status and handler (every status appears, with 0 when none). */
  schedulesByStatus: { status: HealthStatus; handler: string; count: number }[];
  /** How many live schedules break each rule right now. */
  rulesHolding: { rule: (typeof HEALTH_RULE_NAMES)[number]; count: number }[];
  /** The schedules chosen by SLOTKEEPER_METRICS_PER_SCHEDULE; empty by default. */
  schedules: ScheduleSeries[];
  runs: { state: string; count: number; estimated: boolean }[];
  workersAlive: number;
  deliveries: { pending: number; failed: number };
};

export type CollectOptions = { estimateAboveRows?: number; perSchedule?: PerScheduleMetrics; pageSize?: number };

/** Read everything the metrics endpoint reports. */
export async function collectMetrics(db: Db, opts: CollectOptions = {}): Promise<MetricsSnapshot> {
  const [health, totals, finished, deliveries] = await Promise.all([
    aggregateHealth(db, opts.perSchedule ?? null, opts.pageSize ?? HEALTH_PAGE_SIZE),
    getOverviewTotals(db),
    finishedRunCounts(db, opts.estimateAboveRows ?? ESTIMATE_ABOVE_ROWS),
    deliveryCounts(db),
  ]);
  return {
    ...health,
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

type Live = { id: number; name: string; handler: string; enabled: boolean; tagged: boolean };

/**
 * Every live schedule's health, page by page, folded into the counts; the per-schedule series kept
 * only for the opted-in set (the N worst so far, or the tagged ones).
 */
async function aggregateHealth(db: Db, perSchedule: PerScheduleMetrics, pageSize: number) {
  const byStatus = new Map<string, { status: HealthStatus; handler: string; count: number }>();
  const rules = new Map(HEALTH_RULE_NAMES.map((r) => [r, 0]));
  let kept: ScheduleSeries[] = [];
  const tag = perSchedule?.kind === "tag" ? perSchedule.tag : null;
  for (let after = 0; ; ) {
    const page = await db.execute<Live>(sql`
      SELECT id, name, handler, enabled, ${tag === null ? sql`false` : sql`tags @> ARRAY[${tag}]::text[]`} AS tagged
      FROM schedules WHERE deleted_at IS NULL AND id > ${after} ORDER BY id LIMIT ${pageSize}`);
    if (page.rows.length === 0) break;
    after = Number(page.rows[page.rows.length - 1].id);
    const health = await healthWithoutJit(db, page.rows.map((s) => Number(s.id)));
    for (const s of page.rows) {
      const h = health.get(Number(s.id));
      if (!h) continue;
      const key = `${h.status}\u0000${s.handler}`;
      const entry = byStatus.get(key) ?? { status: h.status, handler: s.handler, count: 0 };
      entry.count += 1;
      byStatus.set(key, entry);
      for (const r of HEALTH_RULE_NAMES) if (h.rules[r]) rules.set(r, rules.get(r)! + 1);
      if (perSchedule?.kind === "worst" || s.tagged) kept.push({ name: s.name, enabled: s.enabled, health: h });
    }
    if (perSchedule?.kind === "worst") kept = worstFirst(kept).slice(0, perSchedule.count);
  }
  // Every status appears for some handler, so a status that empties reads 0 rather than vanishing.
  for (const status of HEALTH_STATUSES) {
    if (![...byStatus.values()].some((e) => e.status === status)) byStatus.set(`${status}\u0000`, { status, handler: "", count: 0 });
  }
  return {
    schedulesByStatus: [...byStatus.values()].sort((a, b) => a.status.localeCompare(b.status) || a.handler.localeCompare(b.handler)),
    rulesHolding: HEALTH_RULE_NAMES.map((rule) => ({ rule, count: rules.get(rule)! })),
    schedules: kept.sort((a, b) => a.name.localeCompare(b.name)),
  };
}

const STATUS_RANK: Record<HealthStatus, number> = { failing: 0, late: 1, backlogged: 2, healthy: 3, paused: 4 };

/**
 * Worst first: by status (failing, late, backlogged, healthy, paused), then by how far past its
 * threshold (seconds over the late or backlog threshold, whichever is more), then by name.
 */
export function worstFirst(list: ScheduleSeries[]): ScheduleSeries[] {
  const overdue = (h: ScheduleHealth) =>
    Math.max(
      h.lateAfterSeconds === null ? -Infinity : (h.sinceLastSuccessSeconds ?? h.ageSeconds) - h.lateAfterSeconds,
      h.backlogAfterSeconds === null || h.oldestPendingAgeSeconds === null ? -Infinity : h.oldestPendingAgeSeconds - h.backlogAfterSeconds,
    );
  return [...list].sort((a, b) => STATUS_RANK[a.health.status] - STATUS_RANK[b.health.status] || overdue(b.health) - overdue(a.health) || a.name.localeCompare(b.name));
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
