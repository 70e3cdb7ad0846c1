import { expect, it } from "vitest";
import { finishRuns } from "../runs/finish";
import { setClock } from "../testing/clock";
import { setupTestDatabase } from "../testing/db";
import { makeSchedule, RUNS_BY_HAND } from "../testing/factories";
import { rollUpChartHours } from "./chart-hours";
import { CHART_WINDOWS, getHealthCharts } from "./charts";

// The 7-day chart reads chart_hours, kept by the triggers on runs. Oracles: chart_hours against a
// GROUP BY over runs, and the chart's numbers against a brute-force count over every run row here.
const t = setupTestDatabase({ poolSize: 4 });
const NOW = Date.parse("2030-01-08T10:17:30Z");

type RunRow = {
  schedule_id: number;
  scheduled_for: Date;
  state: string;
  skipped_count: number | null;
  started_at: Date | null;
  finished_at: Date | null;
  slot_seq: number | null;
  queue_state: string | null;
  queue_started_at: Date | null;
};

/** Roll up, then compare chart_hours with a count over runs. */
async function chartHoursMatchRuns() {
  await rollUpChartHours(t.db);
  expect((await t.pool.query("SELECT count(*)::int AS n FROM chart_changes")).rows[0].n).toBe(0);
  const { rows } = await t.pool.query(`
    WITH truth AS (
      SELECT r.schedule_id, date_bin('1 hour', r.scheduled_for, timestamptz 'epoch') AS hour,
        count(*) FILTER (WHERE r.state = 'done')::int AS done, count(*) FILTER (WHERE r.state = 'dead')::int AS dead,
        coalesce(sum(coalesce(r.skipped_count, 1)) FILTER (WHERE r.state = 'skipped'), 0)::int AS skipped,
        count(*) FILTER (WHERE r.state = 'pending')::int AS waiting, max(r.finished_at) FILTER (WHERE r.state = 'done') AS last_done_at
      FROM runs r WHERE r.scheduled_for IS NOT NULL GROUP BY 1, 2)
    SELECT * FROM truth FULL JOIN chart_hours c USING (schedule_id, hour)
    WHERE (truth.done, truth.dead, truth.skipped, truth.waiting, truth.last_done_at) IS DISTINCT FROM (c.done, c.dead, c.skipped, c.waiting, c.last_done_at)`);
  expect(rows).toEqual([]);
}

/** The 7-day chart's outcomes and since-last-success, counted here from every run row. */
function bruteForce(all: RunRow[], ids: number[], from: Date) {
  const { seconds, bucketSeconds: step } = CHART_WINDOWS["7d"];
  const n = seconds / step;
  const start = from.getTime();
  const outcomes = Array.from({ length: n }, () => ({ done: 0, dead: 0, skipped: 0, waiting: 0 }));
  const since: Record<string, number | null>[] = Array.from({ length: n }, () => ({}));
  for (const id of ids) {
    const mine = all.filter((r) => r.schedule_id === id);
    const before = mine
      .filter((r) => r.state === "done" && r.scheduled_for.getTime() < start)
      .sort((a, b) => b.scheduled_for.getTime() - a.scheduled_for.getTime() || (b.slot_seq ?? 0) - (a.slot_seq ?? 0))
      .slice(0, 20);
    let lastOk: number | null = null;
    for (const r of before) if (r.finished_at && (lastOk === null || r.finished_at.getTime() > lastOk)) lastOk = r.finished_at.getTime();
    const inWindow = mine.filter((r) => r.scheduled_for.getTime() >= start && r.scheduled_for.getTime() <= NOW);
    for (let k = 0; k < n; k++) {
      for (const r of inWindow.filter((x) => Math.floor((x.scheduled_for.getTime() - start) / 1000 / step) === k)) {
        if (r.state === "done") {
          outcomes[k].done++;
          if (r.finished_at && (lastOk === null || r.finished_at.getTime() > lastOk)) lastOk = r.finished_at.getTime();
        }
        if (r.state === "dead") outcomes[k].dead++;
        if (r.state === "skipped") outcomes[k].skipped += r.skipped_count ?? 1;
        if (r.state === "pending") outcomes[k].waiting++;
      }
      const sample = Math.min(start + (k + 1) * step * 1000, NOW);
      since[k][`s${id}`] = lastOk === null ? null : Math.round(Math.max(0, (sample - lastOk) / 1000));
    }
  }
  // Oldest pending age at each sample: every run's wait from its slot to its start (a pending one
  // still waits), over the window and an eighth of it before, plus pending runs of any age.
  const lookback = Math.max(step, seconds / 8) * 1000;
  const pending: Record<string, number>[] = Array.from({ length: n }, () => Object.fromEntries(ids.map((id) => [`s${id}`, 0])));
  for (const r of all) {
    if (!ids.includes(r.schedule_id) || r.state === "skipped") continue;
    const sf = r.scheduled_for.getTime();
    const status = r.queue_state === "running" ? "running" : r.state;
    if (sf > NOW || (sf < start - lookback && status !== "pending")) continue;
    const started = status === "running" ? r.queue_started_at : r.started_at;
    const end = status === "pending" ? Infinity : (started ?? r.finished_at ?? new Date(NOW)).getTime();
    for (let k = 0; k < n; k++) {
      const bucketEnd = start + (k + 1) * step * 1000;
      const sample = Math.min(bucketEnd, NOW);
      // waiting at the sample: slotted at or before it, not started before the bucket's end
      if (sf > bucketEnd || (end !== Infinity && bucketEnd >= end)) continue;
      if (sf > sample) continue;
      const key = `s${r.schedule_id}`;
      pending[k][key] = Math.max(pending[k][key], Math.round((sample - sf) / 1000));
    }
  }
  return { outcomes, since, pending };
}

it("the 7-day chart from chart_hours shows what a count over the runs shows, through inserts, finishes, skips, deletes", async () => {
  await setClock(t.pool, new Date(NOW));
  const ids: number[] = [];
  for (let i = 0; i < 6; i++) ids.push((await makeSchedule(t.db, { ...RUNS_BY_HAND, everySeconds: 600 })).id);
  // Eight days of runs, one every 10 minutes per schedule, in random states (seeded), up to an hour ahead.
  await t.pool.query("SELECT setseed(0.26)");
  await t.pool.query(
    `INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, attempts, max_attempts, started_at, finished_at, skipped_count, duration_ms)
     SELECT s.id, 0, g.slot, g.slot, g.slot, x.state::run_state, 1, 3,
       CASE WHEN x.state IN ('done', 'dead') THEN x.started END,
       CASE WHEN x.state IN ('done', 'dead', 'skipped') THEN least(x.started + make_interval(secs => floor(random() * 5000)), sk_now()) END,
       CASE WHEN x.state = 'skipped' AND random() < 0.5 THEN 1 + floor(random() * 4)::int END, 100
     FROM unnest($1::bigint[]) AS s(id)
     CROSS JOIN generate_series(sk_now() - interval '8 days', sk_now() + interval '1 hour', interval '10 min') AS g(slot)
     -- Most runs start within seconds of their slot, some hours later (never after now).
     CROSS JOIN LATERAL (SELECT (ARRAY['done', 'done', 'done', 'dead', 'skipped', 'pending'])[1 + floor(random() * 6)::int + (s.id * 0)::int] AS state,
       least(g.slot + make_interval(secs => floor(random() * random() * random() * 30000)), sk_now()) AS started) x`,
    [ids],
  );
  await chartHoursMatchRuns();

  // The real finish: pending runs claimed, then finished (some succeed, some fail for good).
  const { rows: claimed } = await t.pool.query<{ run_id: number; schedule_id: number }>(
    `UPDATE run_queue q SET state = 'running', attempts = 1, lease_owner = 'w1', started_at = sk_now(), lease_expires_at = sk_now() + interval '1 hour'
     WHERE q.ctid = ANY(ARRAY(SELECT ctid FROM run_queue WHERE state = 'pending' AND scheduled_for <= sk_now() ORDER BY run_id LIMIT 40))
     RETURNING run_id::int, schedule_id::int`,
  );
  // Ten stay running; the rest finish.
  await finishRuns(t.db, "w1", claimed.slice(10).map((c, i) => ({ id: c.run_id, scheduleId: c.schedule_id, attempt: 1, outcome: i % 3 === 0 ? ("failed" as const) : ("succeeded" as const), nonRetryable: true, durationMs: 50 })));
  await chartHoursMatchRuns();
  // A skip that coalesces slots, done runs given a later finish, done runs deleted (a latest finish gone).
  // (A skip takes the run out of the queue too, as lib/runs/operator-skip.ts does.)
  const skip = (n: number, count: number | null) =>
    t.pool.query(
      `WITH s AS (UPDATE runs SET state = 'skipped', skipped_count = $2, finished_at = sk_now()
                  WHERE id IN (SELECT run_id FROM run_queue WHERE state = 'pending' ORDER BY run_id DESC LIMIT $1) RETURNING id)
       DELETE FROM run_queue WHERE run_id IN (SELECT id FROM s)`,
      [n, count],
    );
  await skip(15, 3);
  await t.pool.query("UPDATE runs SET finished_at = finished_at + interval '1 hour' WHERE id IN (SELECT id FROM runs WHERE state = 'done' ORDER BY id LIMIT 30)");
  await t.pool.query("DELETE FROM runs WHERE id IN (SELECT id FROM runs WHERE state = 'done' ORDER BY random() LIMIT 200)");
  await t.pool.query("DELETE FROM runs WHERE id IN (SELECT id FROM runs WHERE scheduled_for < sk_now() - interval '7 days 6 hours')");
  await chartHoursMatchRuns();
  // Written since the roll-up: these hours are read from runs until it runs again.
  await skip(10, null);
  await t.pool.query("DELETE FROM runs WHERE id IN (SELECT id FROM runs WHERE state = 'done' ORDER BY id DESC LIMIT 20)");
  expect((await t.pool.query("SELECT count(*)::int AS n FROM chart_changes")).rows[0].n).toBeGreaterThan(0);

  const charts = () => getHealthCharts(t.db, ids.map((id) => ({ id, name: `s${id}` })), "7d");
  const { rows: all } = await t.pool.query<RunRow>(`
    SELECT r.schedule_id::int, r.scheduled_for, r.state::text, r.skipped_count, r.started_at, r.finished_at, r.slot_seq, q.state::text AS queue_state, q.started_at AS queue_started_at
    FROM runs r LEFT JOIN run_queue q ON q.run_id = r.id`);
  for (const when of ["before the roll-up", "after it"]) {
    if (when === "after it") await chartHoursMatchRuns();
    const c = await charts();
    const expected = bruteForce(all, ids, new Date(c.from));
    expect(c.outcomes.map(({ done, dead, skipped, waiting }) => ({ done, dead, skipped, waiting })), when).toEqual(expected.outcomes);
    expect(c.sinceLastSuccess.map(({ t: _t, ...rest }) => rest), when).toEqual(expected.since);
    expect(c.oldestPendingAge.map(({ t: _t, ...rest }) => rest), when).toEqual(expected.pending);
    expect(c.oldestPendingAge.filter((p) => Object.values(p).some((v) => typeof v === "number" && v > 0)).length).toBeGreaterThan(20);
    expect(c.outcomes.reduce((a, p) => a + p.done + p.dead + p.skipped + p.waiting, 0)).toBeGreaterThan(1000);
  }

  // And it is chart_hours the chart read: a count changed there shows.
  const c = await charts();
  await t.pool.query("UPDATE chart_hours SET done = done + 1000 WHERE hour = $1 AND schedule_id = $2", [c.from, ids[0]]);
  expect((await charts()).outcomes[0].done).toBe(c.outcomes[0].done + 1000);
  await t.pool.query("UPDATE chart_waits SET seconds = 1e7 WHERE schedule_id = $1", [ids[0]]);
  expect((await charts()).oldestPendingAge.filter((p) => p[`s${ids[0]}`] === 1e7).length).toBeGreaterThan(5);
}, 60_000);
