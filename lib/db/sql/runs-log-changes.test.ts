import type { QueryResultRow } from "pg";
import { describe, expect, it } from "vitest";
import { claimRunsDetailed } from "../../runs/claim";
import { finishRuns } from "../../runs/finish";
import { setupTestDatabase } from "../../testing/db";
import { makeRuns, makeSchedule, slots } from "../../testing/factories";

// functions/runs_log_changes.sql: one row in each of the three logs per statement that writes
// runs, whatever its size, naming what the statement wrote. The oracle is the runs table read back
// and the batch the test wrote, not the passes that drain the logs.
const T0 = new Date("2030-01-01T10:00:00Z");
const t = setupTestDatabase({ clock: T0 });
const HOUR = 3_600_000;

type Logs = { alerts: number[][]; charts: { ids: number[]; hours: number[] }[]; successes: { ids: number[]; ats: number[] }[] };
async function logs(): Promise<Logs> {
  const q = async <T extends QueryResultRow>(text: string) => (await t.pool.query<T>(text)).rows;
  return {
    alerts: (await q<{ ids: string[] }>("SELECT schedule_ids AS ids FROM alert_changes")).map((r) => r.ids.map(Number)),
    charts: (await q<{ ids: string[]; hours: Date[] }>("SELECT schedule_ids AS ids, hours FROM chart_changes")).map((r) => ({ ids: r.ids.map(Number), hours: r.hours.map((h) => new Date(h).getTime()) })),
    successes: (await q<{ ids: string[]; ats: Date[] }>("SELECT schedule_ids AS ids, finished_ats AS ats FROM last_success_changes")).map((r) => ({
      ids: r.ids.map(Number),
      ats: r.ats.map((a) => new Date(a).getTime()),
    })),
  };
}
const clearLogs = () => t.pool.query("DELETE FROM alert_changes; DELETE FROM chart_changes; DELETE FROM last_success_changes");
const uniq = <T>(xs: T[]) => [...new Set(xs)].sort();

describe("the runs' change log", () => {
  it("a finish of 500 runs over 3 schedules and 2 slot hours adds one row to each log, naming every schedule, slot hour and latest success", async () => {
    const ids = await Promise.all([0, 1, 2].map(async () => (await makeSchedule(t.db)).id));
    // 500 due slots over two slot hours (08:xx and 09:xx).
    const all: { id: number; scheduleId: number; slot: number }[] = [];
    for (const [i, s] of ids.entries()) {
      const at = slots(T0.getTime() - 80 * 60_000 - i * 60_000, i === 2 ? 100 : 200, 10_000);
      const runIds = await makeRuns(t.db, s, at.map((d) => ({ scheduledFor: d })));
      runIds.forEach((id, k) => all.push({ id, scheduleId: s, slot: at[k].getTime() }));
    }
    expect(all).toHaveLength(500);
    const claimed = await claimRunsDetailed(t.db, { workerId: "w", partitions: null, limit: 500, rescueExpired: false, queues: { default: 500 } });
    expect(claimed.claimed).toHaveLength(500);
    await clearLogs();

    // One statement: every run succeeds (the finish writes successes in one statement; other
    // outcomes in a second, which logs once more).
    const finished = await finishRuns(t.db, "w", claimed.claimed.map((c) => ({ id: c.id, attempt: c.attempt, outcome: "succeeded" as const, durationMs: 5, scheduleId: c.scheduleId })));
    expect(finished.applied).toBe(500);

    const got = await logs();
    expect(got.alerts).toHaveLength(1);
    expect(got.charts).toHaveLength(1);
    expect(got.successes).toHaveLength(1);
    expect(uniq(got.alerts[0])).toEqual(uniq(ids));
    const pairs = (ids: number[], hours: number[]) => uniq(ids.map((id, i) => `${id}@${hours[i]}`));
    expect(pairs(got.charts[0].ids, got.charts[0].hours)).toEqual(uniq(all.map((r) => `${r.scheduleId}@${Math.floor(r.slot / HOUR) * HOUR}`)));
    // The latest success of each schedule that had one, as the runs table says.
    const { rows } = await t.pool.query<{ id: string; at: Date }>("SELECT schedule_id AS id, max(finished_at) AS at FROM runs WHERE state = 'done' GROUP BY 1");
    const latest = new Map<number, number>();
    got.successes[0].ids.forEach((id, i) => latest.set(id, Math.max(latest.get(id) ?? 0, got.successes[0].ats[i])));
    expect(Object.fromEntries(latest)).toEqual(Object.fromEntries(rows.map((r) => [Number(r.id), new Date(r.at).getTime()])));
  });

  it("an insert of runs logs them once for the statement; a statement that writes no run logs nothing", async () => {
    const s = (await makeSchedule(t.db)).id;
    await clearLogs();
    await t.pool.query(
      `INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, attempts, max_attempts, started_at, finished_at)
       VALUES ($1, 0, $2, $2, $2, 'done', 1, 1, $2, $3), ($1, 0, $4, $4, $4, 'pending', 0, 1, NULL, NULL)`,
      [s, new Date(T0.getTime() - 2 * HOUR), new Date(T0.getTime() - 2 * HOUR + 1000), new Date(T0.getTime() + 60_000)],
    );
    const got = await logs();
    expect(got.alerts).toEqual([[s, s]]);
    expect(got.charts).toEqual([{ ids: [s, s], hours: [T0.getTime() - 2 * HOUR, T0.getTime()] }]);
    expect(got.successes).toEqual([{ ids: [s], ats: [T0.getTime() - 2 * HOUR + 1000] }]);
    await clearLogs();
    await t.pool.query("UPDATE runs SET state = state WHERE false");
    expect(await logs()).toEqual({ alerts: [], charts: [], successes: [] });
  });
});
