/**
 * Health over time, derived from the run rows by SQL: runs by outcome, since-last-success and
 * oldest-pending-age per schedule, in fixed buckets over a window (1 h, 24 h, 7 d).
 *
 * Bounded and index-friendly: every statement reads only the given schedules' runs whose slot
 * lies in the window (plus an eighth of it as lookback for pending age), through runs_slot_key
 * (schedule_id, scheduled_for desc, id desc); buckets come from generate_series / date_bin. A
 * window whose buckets are whole hours (7 d) counts outcomes and last successes from chart_hours,
 * the runs pre-counted by schedule and slot hour (lib/health/chart-hours.ts), and reads runs only
 * for the current hour and the hours not rolled up yet.
 * Sample points are bucket ends, the last one clipped to sk_now() (one clock decides).
 */
import { sql, type SQL } from "drizzle-orm";
import { z } from "zod";
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
export const chartSeriesSchema = z.object({ key: z.string(), scheduleId: z.number().int(), name: z.string() }).strict();
export type ChartSeries = z.infer<typeof chartSeriesSchema>;
export const outcomePointSchema = z.object({ t: z.string(), done: z.number(), dead: z.number(), skipped: z.number(), waiting: z.number() }).strict();
export type OutcomePoint = z.infer<typeof outcomePointSchema>;
/** `t` (a bucket's start) and one value per series key (seconds, or null when there is none). */
export const seriesPointSchema = z.object({ t: z.string() }).catchall(z.union([z.number(), z.string(), z.null()]));
export type SeriesPoint = z.infer<typeof seriesPointSchema>;

export const healthChartsSchema = z
  .object({
    window: z.enum(Object.keys(CHART_WINDOWS) as [ChartWindow, ...ChartWindow[]]),
    bucketSeconds: z.number().int(),
    from: z.string(),
    to: z.string(),
    series: z.array(chartSeriesSchema),
    outcomes: z.array(outcomePointSchema),
    sinceLastSuccess: z.array(seriesPointSchema),
    oldestPendingAge: z.array(seriesPointSchema),
  })
  .strict();
export type HealthCharts = z.infer<typeof healthChartsSchema>;

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

  // The slots counted from runs: all of the window, or with hourly buckets the current hour (the
  // only one holding slots after now, which the window leaves out) and the hours the roll-up has
  // not counted since their runs were written (still listed in chart_changes); every other hour is
  // read from chart_hours (lib/health/chart-hours.ts). Either way the numbers are the runs' own.
  const hourly = step % 3_600 === 0;
  const cutIso = hourly ? new Date(Math.max(Math.floor(new Date(now).getTime() / 3_600_000) * 3_600_000, new Date(start).getTime())).toISOString() : startIso;
  const k = (col: SQL) => sql`floor(extract(epoch FROM ${col} - ${startIso}::timestamptz) / ${step})::int`;
  const runsFrom = sql`FROM runs r WHERE r.schedule_id = ANY(${idsParam}::bigint[]) AND r.scheduled_for >= ${cutIso}::timestamptz AND r.scheduled_for <= ${nowIso}::timestamptz`;
  const listedFrom = sql`
    FROM (SELECT DISTINCT cc.schedule_id, cc.hour FROM chart_changed_hours cc
          WHERE cc.schedule_id = ANY(${idsParam}::bigint[]) AND cc.hour >= ${startIso}::timestamptz AND cc.hour < ${cutIso}::timestamptz) l
    JOIN runs r ON r.schedule_id = l.schedule_id AND r.scheduled_for >= l.hour AND r.scheduled_for < l.hour + interval '1 hour'
    WHERE true`;
  const hoursFrom = sql`FROM chart_hours c WHERE c.schedule_id = ANY(${idsParam}::bigint[]) AND c.hour >= ${startIso}::timestamptz AND c.hour < ${cutIso}::timestamptz
    AND NOT EXISTS (SELECT 1 FROM chart_changed_hours cc WHERE cc.schedule_id = c.schedule_id AND cc.hour = c.hour)`;
  const runOutcome = sql`${k(sql`r.scheduled_for`)} AS k, (r.state = 'done')::int AS done, (r.state = 'dead')::int AS dead,
      CASE WHEN r.state = 'skipped' THEN coalesce(r.skipped_count, 1) ELSE 0 END AS skipped, (r.state IN ('pending', 'running'))::int AS waiting`;
  const outcomeRows = sql`
    SELECT ${runOutcome} ${runsFrom}
    ${hourly ? sql`UNION ALL SELECT ${runOutcome} ${listedFrom} UNION ALL SELECT ${k(sql`c.hour`)}, c.done, c.dead, c.skipped, c.waiting ${hoursFrom}` : sql``}`;
  const runDone = sql`r.schedule_id, ${k(sql`r.scheduled_for`)} AS k, r.finished_at AS f`;
  const lastDoneRows = sql`
    SELECT ${runDone} ${runsFrom} AND r.state = 'done'
    ${hourly ? sql`UNION ALL SELECT ${runDone} ${listedFrom} AND r.state = 'done' UNION ALL SELECT c.schedule_id, ${k(sql`c.hour`)}, c.last_done_at ${hoursFrom} AND c.last_done_at IS NOT NULL` : sql``}`;

  // Oldest pending age: each run waited from its slot to its start. Without hourly buckets, every
  // run of the window and the lookback, from run_status. With them: the unfinished runs from
  // run_queue (pending: still waiting; running: until its start), the finished runs of the current
  // hour and of the hours not rolled up from runs, and the other finished runs' waits from
  // chart_waits, already worked out at each sample (lib/health/chart-hours.ts). Per (schedule,
  // sample) the chart shows the maximum, so a wait read twice changes nothing.
  const lookbackIso = new Date(new Date(start).getTime() - lookback * 1000).toISOString();
  const finishedWait = sql`r.schedule_id, r.scheduled_for AS sf, coalesce(r.started_at, r.finished_at, ${nowIso}::timestamptz) AS wait_end`;
  const waitRows = hourly
    ? sql`
        SELECT ${finishedWait} ${runsFrom} AND r.state IN ('done', 'dead')
        UNION ALL
        SELECT ${finishedWait}
        FROM (SELECT DISTINCT cc.schedule_id, cc.hour FROM chart_changed_hours cc
              WHERE cc.schedule_id = ANY(${idsParam}::bigint[]) AND cc.hour >= ${lookbackIso}::timestamptz AND cc.hour < ${cutIso}::timestamptz) l
        JOIN runs r ON r.schedule_id = l.schedule_id AND r.scheduled_for >= l.hour AND r.scheduled_for < l.hour + interval '1 hour'
        WHERE r.state IN ('done', 'dead') AND r.scheduled_for >= ${lookbackIso}::timestamptz
        UNION ALL
        SELECT q.schedule_id, q.scheduled_for, CASE WHEN q.state = 'pending' THEN 'infinity'::timestamptz ELSE q.started_at END
        FROM run_queue q
        WHERE q.schedule_id = ANY(${idsParam}::bigint[]) AND q.state IN ('pending', 'running') AND q.scheduled_for <= ${nowIso}::timestamptz
          AND (q.state = 'pending' OR q.scheduled_for >= ${lookbackIso}::timestamptz)`
    : sql`
        SELECT r.schedule_id, r.scheduled_for AS sf,
          CASE WHEN r.state = 'pending' THEN 'infinity'::timestamptz ELSE coalesce(r.started_at, r.finished_at, ${nowIso}::timestamptz) END AS wait_end
        -- run_status: a running run has started (its start is in run_queue), it is not waiting.
        FROM run_status r
        WHERE r.schedule_id = ANY(${idsParam}::bigint[]) AND r.state <> 'skipped'
          AND r.scheduled_for >= ${lookbackIso}::timestamptz
          AND r.scheduled_for <= ${nowIso}::timestamptz
        UNION ALL
        SELECT r.schedule_id, r.scheduled_for, 'infinity'::timestamptz
        FROM run_queue r
        WHERE r.schedule_id = ANY(${idsParam}::bigint[]) AND r.state = 'pending'
          AND r.scheduled_for < ${lookbackIso}::timestamptz`;

  const [outcomes, since, pending] = await Promise.all([
    db.execute<{ k: number; done: number; dead: number; skipped: number; waiting: number }>(sql`
      SELECT x.k, sum(x.done)::int AS done, sum(x.dead)::int AS dead, sum(x.skipped)::int AS skipped, sum(x.waiting)::int AS waiting
      FROM (${outcomeRows}) x
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
      agg AS (SELECT y.schedule_id, y.k, max(y.f) AS f FROM (${lastDoneRows}) y GROUP BY 1, 2),
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
      WITH w AS (${waitRows}),
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
      GROUP BY 1, 2
      ${hourly ? sql`UNION ALL
      SELECT c.schedule_id, (round(extract(epoch FROM c.sample_at - ${startIso}::timestamptz) / ${step}) - 1)::int AS k, max(c.seconds)
      FROM chart_waits c
      WHERE c.schedule_id = ANY(${idsParam}::bigint[]) AND c.hour >= ${lookbackIso}::timestamptz AND c.hour < ${cutIso}::timestamptz
        AND c.sample_at > ${startIso}::timestamptz AND c.sample_at <= ${nowIso}::timestamptz
        AND NOT EXISTS (SELECT 1 FROM chart_changed_hours cc WHERE cc.schedule_id = c.schedule_id AND cc.hour = c.hour)
      GROUP BY 1, 2` : sql``}`),
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
  // A sample may come from more than one source (above): the chart shows the largest.
  for (const r of pending.rows) {
    if (r.k < 0 || r.k >= n) continue;
    const p = pendingPoints[r.k];
    p[`s${r.schedule_id}`] = Math.max(Number(p[`s${r.schedule_id}`] ?? 0), Math.max(0, Math.round(r.seconds)));
  }
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
