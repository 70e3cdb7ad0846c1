/**
 * Health over time, derived from the run rows by SQL: runs by outcome, since-last-success and
 * oldest-pending-age per schedule, in fixed buckets over a window (1 h, 24 h, 7 d).
 *
 * Bounded and index-friendly: every statement reads only the given schedules' runs whose slot
 * lies in the window (plus an eighth of it as lookback for pending age), through runs_slot_key
 * (schedule_id, scheduled_for desc, id desc); buckets come from generate_series / date_bin.
 * Sample points are bucket ends, the last one clipped to sk_now() (one clock decides).
 */
import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { AppError } from "../errors";

export const CHART_WINDOWS = {
  "1h": { seconds: 3_600, bucketSeconds: 60 },
  "24h": { seconds: 86_400, bucketSeconds: 900 },
  "7d": { seconds: 604_800, bucketSeconds: 7_200 },
} as const;
export type ChartWindow = keyof typeof CHART_WINDOWS;

export function parseChartWindow(v: string | null): ChartWindow {
  const w = v ?? "24h";
  if (!(w in CHART_WINDOWS)) throw new AppError("invalid", `window must be one of ${Object.keys(CHART_WINDOWS).join(", ")}`, "window");
  return w as ChartWindow;
}

/** One series per schedule; `key` names its value in each point (`s<id>`). */
export type ChartSeries = { key: string; scheduleId: number; name: string };
export type OutcomePoint = { t: string; done: number; dead: number; skipped: number; waiting: number };
export type SeriesPoint = { t: string } & Record<string, number | string | null>;

export type HealthCharts = {
  window: ChartWindow;
  bucketSeconds: number;
  from: string;
  to: string;
  series: ChartSeries[];
  outcomes: OutcomePoint[];
  sinceLastSuccess: SeriesPoint[];
  oldestPendingAge: SeriesPoint[];
};

/** Charts for these schedules (by id, with their names for the legend). */
export async function getHealthCharts(db: Db, schedules: { id: number; name: string }[], window: ChartWindow): Promise<HealthCharts> {
  const { seconds, bucketSeconds: step } = CHART_WINDOWS[window];
  const ids = schedules.map((s) => s.id);
  const b = await db.execute<{ start: Date; end: Date; now: Date; n: number }>(sql`
    WITH e AS (SELECT date_bin(make_interval(secs => ${step}), sk_now(), timestamptz 'epoch') + make_interval(secs => ${step}) AS end_at)
    SELECT e.end_at - make_interval(secs => ${seconds}) AS start, e.end_at AS end, sk_now() AS now, ${seconds / step}::int AS n FROM e`);
  const { start, end, now, n } = b.rows[0];
  const startIso = new Date(start).toISOString();
  const nowIso = new Date(now).toISOString();
  const idsParam = sql.param(ids);
  const stepI = sql`make_interval(secs => ${step})`;
  // Runs slotted before the window that were still waiting inside it: look back an eighth of the
  // window (still-pending ones of any age come from run_queue_pending_idx in the second branch).
  const lookback = Math.max(step, seconds / 8);

  const [outcomes, since, pending] = await Promise.all([
    db.execute<{ k: number; done: number; dead: number; skipped: number; waiting: number }>(sql`
      SELECT floor(extract(epoch FROM r.scheduled_for - ${startIso}::timestamptz) / ${step})::int AS k,
        count(*) FILTER (WHERE r.state = 'done')::int AS done,
        count(*) FILTER (WHERE r.state = 'dead')::int AS dead,
        coalesce(sum(coalesce(r.skipped_count, 1)) FILTER (WHERE r.state = 'skipped'), 0)::int AS skipped,
        count(*) FILTER (WHERE r.state IN ('pending', 'running'))::int AS waiting
      FROM runs r
      WHERE r.schedule_id = ANY(${idsParam}::bigint[])
        AND r.scheduled_for >= ${startIso}::timestamptz AND r.scheduled_for <= ${nowIso}::timestamptz
      GROUP BY 1`),
    // Last success at each sample: the running max of finishes (bucketed by slot), seeded with the
    // last success before the window.
    db.execute<{ schedule_id: number; k: number; seconds: number | null }>(sql`
      WITH s AS (SELECT unnest(${idsParam}::bigint[]) AS id),
      base AS (
        SELECT s.id, (SELECT max(x.f) FROM (
          SELECT r.finished_at AS f FROM runs r WHERE r.schedule_id = s.id AND r.state = 'done' AND r.scheduled_for < ${startIso}::timestamptz
          ORDER BY r.scheduled_for DESC NULLS LAST, r.slot_seq DESC NULLS LAST LIMIT 20) x) AS f0
        FROM s),
      agg AS (
        SELECT r.schedule_id, floor(extract(epoch FROM r.scheduled_for - ${startIso}::timestamptz) / ${step})::int AS k, max(r.finished_at) AS f
        FROM runs r
        WHERE r.schedule_id = ANY(${idsParam}::bigint[]) AND r.state = 'done'
          AND r.scheduled_for >= ${startIso}::timestamptz AND r.scheduled_for <= ${nowIso}::timestamptz
        GROUP BY 1, 2),
      grid AS (
        SELECT base.id, g.k, base.f0, agg.f FROM base CROSS JOIN generate_series(0, ${n} - 1) AS g(k)
        LEFT JOIN agg ON agg.schedule_id = base.id AND agg.k = g.k)
      SELECT id AS schedule_id, k,
        -- null until the first success (greatest() would skip the null and say 0)
        CASE WHEN last_ok IS NULL THEN NULL ELSE greatest(0, extract(epoch FROM
          least(${startIso}::timestamptz + (k + 1) * ${stepI}, ${nowIso}::timestamptz) - last_ok)) END::float8 AS seconds
      FROM (SELECT id, k, greatest(f0, max(f) OVER (PARTITION BY id ORDER BY k)) AS last_ok FROM grid) g
      ORDER BY id, k`),
    // A run is pending at sample t when its slot <= t and it had not started by t; the oldest
    // pending age at t is t minus the earliest such slot (its first start, approximated by started_at). Each run yields only the samples it
    // waited across (k_lo..k_hi), so the work is linear in the runs read.
    db.execute<{ schedule_id: number; k: number; seconds: number }>(sql`
      WITH w AS (
        SELECT r.schedule_id, r.scheduled_for AS sf,
          CASE WHEN r.state = 'pending' THEN 'infinity'::timestamptz ELSE coalesce(r.started_at, r.finished_at, ${nowIso}::timestamptz) END AS wait_end
        -- run_status: a running run has started (its start is in run_queue), it is not waiting.
        FROM run_status r
        WHERE r.schedule_id = ANY(${idsParam}::bigint[]) AND r.state <> 'skipped'
          AND r.scheduled_for >= ${startIso}::timestamptz - make_interval(secs => ${lookback})
          AND r.scheduled_for <= ${nowIso}::timestamptz
        UNION ALL
        SELECT r.schedule_id, r.scheduled_for, 'infinity'::timestamptz
        FROM run_queue r
        WHERE r.schedule_id = ANY(${idsParam}::bigint[]) AND r.state = 'pending'
          AND r.scheduled_for < ${startIso}::timestamptz - make_interval(secs => ${lookback})),
      span AS (
        SELECT w.schedule_id, w.sf,
          greatest(0, ceil(extract(epoch FROM w.sf - ${startIso}::timestamptz) / ${step}) - 1)::int AS k_lo,
          CASE WHEN w.wait_end = 'infinity' THEN ${n} - 1
               ELSE least(${n} - 1, ceil(extract(epoch FROM w.wait_end - ${startIso}::timestamptz) / ${step}) - 2)::int END AS k_hi
        FROM w)
      SELECT span.schedule_id, g.k,
        max(extract(epoch FROM least(${startIso}::timestamptz + (g.k + 1) * ${stepI}, ${nowIso}::timestamptz) - span.sf))::float8 AS seconds
      FROM span CROSS JOIN LATERAL generate_series(span.k_lo, span.k_hi) AS g(k)
      WHERE span.k_hi >= span.k_lo
      GROUP BY 1, 2`),
  ]);

  const t = (k: number) => new Date(new Date(start).getTime() + k * step * 1000).toISOString();
  const series: ChartSeries[] = schedules.map((s) => ({ key: `s${s.id}`, scheduleId: s.id, name: s.name }));
  const outcomePoints: OutcomePoint[] = Array.from({ length: n }, (_, k) => ({ t: t(k), done: 0, dead: 0, skipped: 0, waiting: 0 }));
  for (const o of outcomes.rows) if (o.k >= 0 && o.k < n) outcomePoints[o.k] = { t: t(o.k), done: o.done, dead: o.dead, skipped: o.skipped, waiting: o.waiting };
  const sincePoints: SeriesPoint[] = Array.from({ length: n }, (_, k) => ({ t: t(k) }));
  const pendingPoints: SeriesPoint[] = Array.from({ length: n }, (_, k) => {
    const p: SeriesPoint = { t: t(k) };
    for (const s of series) p[s.key] = 0;
    return p;
  });
  for (const r of since.rows) if (r.k >= 0 && r.k < n) sincePoints[r.k][`s${r.schedule_id}`] = r.seconds === null ? null : Math.round(r.seconds);
  for (const r of pending.rows) if (r.k >= 0 && r.k < n) pendingPoints[r.k][`s${r.schedule_id}`] = Math.max(0, Math.round(r.seconds));
  return {
    window,
    bucketSeconds: step,
    from: new Date(start).toISOString(),
    to: new Date(end).toISOString(),
    series,
    outcomes: outcomePoints,
    sinceLastSuccess: sincePoints,
    oldestPendingAge: pendingPoints,
  };
}
