// `npm run bench -- --alerts-measure [--alerts-schedules N]`: what an alert pass, a finish and the
// 7-day chart cost at N schedules (default 100,000), on the bench's fresh database, the clock moved
// with sk_clock. Phases, each timed (scripts/bench/timing.ts):
// - every schedule with one done run and one pending: the health of all of them read in pages of
//   2,000 (the old full scan), the first alert pass (everything due), then five idle passes;
// - a finish batch of 100 (the real finishRuns) with the runs' alert and chart triggers on and off,
//   four rounds of each of the four combinations, N/16 runs each;
// - a busy pass after 1 % of schedules finished a run;
// - 12 schedules with a run a minute for 7 days: the chart_hours roll-up, then five 7-day charts.
import type pg from "pg";
import type { Db } from "../../lib/db/client";
import { evaluateAlerts } from "../../lib/alerts/evaluate";
import { getHealthCharts } from "../../lib/health/charts";
import { rollUpChartHours } from "../../lib/health/chart-hours";
import { getScheduleHealth } from "../../lib/health/schedule-health";
import { finishRuns } from "../../lib/runs/finish";
import { setClock } from "../../lib/testing/clock";
import { timed, timeRounds } from "./timing";

export type AlertsMeasureReport = {
  schedules: number;
  fullHealthScanMs: number;
  firstPass: { ms: number; checked: number };
  idlePassMs: number[];
  /** Milliseconds per finish batch of 100, with the runs' change log trigger off and on, one per round. */
  finishBatchOf100Ms: Record<"off" | "logged", number[]>;
  busyPass: { ms: number; checked: number; changedSchedules: number };
  chartRollUp: { rows: number; ms: number };
  chart7dMs: number[];
};

const OPTS = { publicUrl: "http://x", reminderSeconds: 3600 };
const r = Math.round;

export async function measureAlerts(pool: pg.Pool, db: Db, o: { schedules: number }): Promise<AlertsMeasureReport> {
  const N = o.schedules;
  await setClock(pool, "2030-01-08T10:17:30Z");
  try {
    await pool.query(`INSERT INTO schedules (name, handler, every_seconds, timezone, enabled, next_slot_at, partition, created_at, updated_at, catch_up)
      SELECT 'bulk-' || g, 'noop', 3600, 'UTC', true, sk_now() + interval '1 hour', 0, sk_now() - interval '1 day', sk_now(), 'all' FROM generate_series(1, $1::int) g`, [N]);
    await pool.query(`INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, attempts, max_attempts, started_at, finished_at, duration_ms)
      SELECT s.id, 0, sk_now() - interval '17 min', sk_now() - interval '17 min', sk_now(), 'done', 1, 3, sk_now(), sk_now(), 100 FROM schedules s`);
    await pool.query(`INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, attempts, max_attempts)
      SELECT s.id, 0, sk_now() + interval '43 min', sk_now() + interval '43 min', sk_now() + interval '43 min', 'pending', 0, 3 FROM schedules s`);
    await pool.query("VACUUM ANALYZE");
    const ids = (await pool.query<{ id: number }>("SELECT id::int FROM schedules ORDER BY id")).rows.map((x) => x.id);
    const fullScan = await timed(async () => {
      for (let i = 0; i < ids.length; i += 2000) await getScheduleHealth(db, ids.slice(i, i + 2000));
    });
    const first = await timed(() => evaluateAlerts(db, OPTS));
    await setClock(pool, "2030-01-08T10:18:00Z");
    const idle = await timeRounds(5, () => evaluateAlerts(db, OPTS));

    // 1 % of schedules change: a run each claimed and finished (the real finish), in batches of 100.
    await pool.query(`INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, attempts, max_attempts)
      SELECT s.id, 0, sk_now(), sk_now(), sk_now(), 'pending', 0, 3 FROM schedules s`);
    const claim = async (n: number, from: number) =>
      (
        await pool.query<{ run_id: number; schedule_id: number }>(
          `UPDATE run_queue q SET state = 'running', attempts = 1, lease_owner = 'w1', started_at = sk_now(), lease_expires_at = sk_now() + interval '1 hour'
           WHERE q.ctid = ANY(ARRAY(SELECT ctid FROM run_queue WHERE state = 'pending' AND scheduled_for <= sk_now() AND schedule_id > $2 ORDER BY schedule_id LIMIT $1))
           RETURNING run_id::int, schedule_id::int`,
          [n, from],
        )
      ).rows;
    /** Milliseconds per batch of 100 to finish `rows`. */
    const finishAll = async (rows: { run_id: number; schedule_id: number }[]) => {
      const { ms } = await timed(async () => {
        for (let i = 0; i < rows.length; i += 100)
          await finishRuns(db, "w1", rows.slice(i, i + 100).map((x) => ({ id: x.run_id, scheduleId: x.schedule_id, attempt: 1, outcome: "succeeded" as const, durationMs: 5 })));
      });
      return ms / (rows.length / 100);
    };
    const TRIGGER = "runs_log_changes_update";
    const finishMs: AlertsMeasureReport["finishBatchOf100Ms"] = { off: [], logged: [] };
    let from = 0;
    const per = Math.floor(N / 8);
    try {
      for (let round = 0; round < 4; round++)
        for (const label of ["off", "logged"] as const) {
          await pool.query(`ALTER TABLE runs ${label === "off" ? "DISABLE" : "ENABLE"} TRIGGER ${TRIGGER}`);
          const rows = await claim(per, from);
          from = rows[rows.length - 1].schedule_id;
          finishMs[label].push(Math.round((await finishAll(rows)) * 10) / 10);
        }
    } finally {
      await pool.query(`ALTER TABLE runs ENABLE TRIGGER ${TRIGGER}`);
    }
    // The finishes above touched every schedule: one pass takes them in, then 1 % change.
    await setClock(pool, "2030-01-08T10:19:00Z");
    await evaluateAlerts(db, OPTS);
    const { rowCount: changed } = await pool.query(`INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, attempts, max_attempts)
      SELECT s.id, 0, sk_now(), sk_now(), sk_now(), 'pending', 0, 3 FROM schedules s WHERE s.id % 100 = 0`);
    await finishAll(await claim(Math.round(N / 100), 0));
    await setClock(pool, "2030-01-08T10:19:30Z");
    const busy = await timed(() => evaluateAlerts(db, OPTS));

    // Charts: 12 schedules with a run every minute for 7 days.
    const cs = (
      await pool.query<{ id: number; name: string }>(`INSERT INTO schedules (name, handler, every_seconds, timezone, enabled, next_slot_at, partition, created_at, updated_at, catch_up)
        SELECT 'chart-' || g, 'noop', 60, 'UTC', false, sk_now(), 0, sk_now() - interval '8 days', sk_now(), 'all' FROM generate_series(1, 12) g RETURNING id::int, name`)
    ).rows;
    await pool.query(
      `INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, attempts, max_attempts, started_at, finished_at, duration_ms)
       SELECT s.id, 0, g, g, g, CASE WHEN random() < 0.9 THEN 'done' ELSE 'dead' END::run_state, 1, 3, g + interval '1 s', g + interval '2 s', 1000
       FROM unnest($1::bigint[]) s(id) CROSS JOIN generate_series(sk_now() - interval '7 days 1 hour', sk_now() - interval '1 min', interval '1 min') g`,
      [cs.map((c) => c.id)],
    );
    await pool.query("VACUUM ANALYZE");
    const rollUp = await timed(async () => {
      let n = 0;
      for (let k = await rollUpChartHours(db); k > 0; k = await rollUpChartHours(db)) n += k;
      return n;
    });
    await pool.query("VACUUM ANALYZE");
    const charts = await timeRounds(5, () => getHealthCharts(db, cs, "7d"));
    return {
      schedules: N,
      fullHealthScanMs: r(fullScan.ms),
      firstPass: { ms: r(first.ms), checked: first.value.checked },
      idlePassMs: idle.map(r),
      finishBatchOf100Ms: finishMs,
      busyPass: { ms: r(busy.ms), checked: busy.value.checked, changedSchedules: changed ?? 0 },
      chartRollUp: { rows: rollUp.value, ms: r(rollUp.ms) },
      chart7dMs: charts.map(r),
    };
  } finally {
    await setClock(pool, null);
  }
}
