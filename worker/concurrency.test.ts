import { describe, expect, it } from "vitest";
import { runClockFrom } from "../lib/testing/clock";
import { setupTestDatabase } from "../lib/testing/db";
import { makeRuns, makeSchedule, RUNS_BY_HAND, slots } from "../lib/testing/factories";
import { readRun } from "../lib/testing/runs";
import { startWorkers } from "../lib/testing/spawn";
import { waitUntil } from "../lib/testing/wait";

// Several real worker processes on one database.
const T0 = new Date("2030-01-01T10:00:00Z");
const t = setupTestDatabase();

/** Attempts of one schedule's runs as [start, end] intervals on the database clock, in slot order. */
async function attemptIntervals(scheduleId: number) {
  const { rows } = await t.pool.query<{ scheduled_for: Date; started_at: Date; finished_at: Date; worker_id: string }>(
    `SELECT r.scheduled_for, a.started_at, a.finished_at, a.worker_id FROM run_attempts a JOIN runs r ON r.id = a.run_id
     WHERE r.schedule_id = $1 ORDER BY r.scheduled_for, a.attempt`,
    [scheduleId],
  );
  return rows;
}

const overlaps = (a: { started_at: Date; finished_at: Date }, b: { started_at: Date; finished_at: Date }) =>
  a.started_at < b.finished_at && b.started_at < a.finished_at;

describe("many workers on one database", () => {
  it("4 processes, 2,000 runs: every run done exactly once, none left running", async () => {
    await runClockFrom(t.pool, T0);
    const started = Date.now();
    await startWorkers(t.url, ["many-1", "many-2", "many-3", "many-4"], { SLOTKEEPER_CONCURRENCY: "50" });
    // Spread over all 16 partitions: each worker claims in the partitions it holds.
    const schedules = await Promise.all(Array.from({ length: 20 }, async (_, i) => (await makeSchedule(t.db, { ...RUNS_BY_HAND, partition: i % 16 })).id));
    // 20 schedules x 100 slots, all due now.
    for (const s of schedules) await makeRuns(t.db, s, slots(T0.getTime() - 100 * 60_000, 100).map((d) => ({ scheduledFor: d })));
    await waitUntil(async () => (await t.pool.query("SELECT count(*)::int AS n FROM runs WHERE state = 'done'")).rows[0].n === 2000, 90_000, "2,000 done runs");
    const { rows: states } = await t.pool.query("SELECT state, attempts, count(*)::int AS n FROM runs GROUP BY 1, 2");
    expect(states).toEqual([{ state: "done", attempts: 1, n: 2000 }]);
    const { rows: byWorker } = await t.pool.query<{ worker_id: string; n: number }>(
      "SELECT worker_id, count(*)::int AS n FROM run_attempts WHERE outcome = 'succeeded' GROUP BY 1 ORDER BY 1",
    );
    expect(byWorker.reduce((sum, w) => sum + w.n, 0)).toBe(2000);
    expect((await t.pool.query("SELECT count(DISTINCT run_id)::int AS n FROM run_attempts")).rows[0].n).toBe(2000);
    console.log(JSON.stringify({ event: "test:many-workers", runs: 2000, workers: 4, seconds: (Date.now() - started) / 1000, byWorker }));
    // Every worker took a share (SKIP LOCKED spreads the work rather than serialising it).
    expect(byWorker.length).toBeGreaterThanOrEqual(2);
  }, 120_000);
});

describe("overlap policies with concurrent workers", () => {
  const setup = async (overlap: "allow" | "forbid" | "skip", ms: number) => {
    await runClockFrom(t.pool, T0);
    await startWorkers(t.url, ["ov-1", "ov-2", "ov-3"]);
    const s = (await makeSchedule(t.db, { ...RUNS_BY_HAND, handler: "sleep", payload: { ms }, overlap })).id;
    const ids = await makeRuns(t.db, s, [3, 2, 1].map((n) => ({ scheduledFor: new Date(T0.getTime() - n * 1000) })));
    return { s, ids };
  };
  const allFinished = (ids: number[]) => async () => {
    const rows = await Promise.all(ids.map((id) => readRun(t.pool, id)));
    return rows.every((r) => ["done", "skipped", "dead"].includes(r.state));
  };

  it("allow: runs of one schedule overlap", async () => {
    const { s, ids } = await setup("allow", 1500);
    await waitUntil(allFinished(ids), 30_000, "three finished runs");
    const iv = await attemptIntervals(s);
    expect(iv).toHaveLength(3);
    expect(overlaps(iv[0], iv[1]) || overlaps(iv[1], iv[2]) || overlaps(iv[0], iv[2])).toBe(true);
  }, 120_000);

  it("forbid: each slot waits for the previous run to finish, in slot order", async () => {
    const { s, ids } = await setup("forbid", 700);
    await waitUntil(allFinished(ids), 30_000, "three finished runs");
    for (const id of ids) expect((await readRun(t.pool, id)).state).toBe("done");
    const iv = await attemptIntervals(s);
    expect(iv).toHaveLength(3);
    expect(overlaps(iv[0], iv[1]) || overlaps(iv[1], iv[2]) || overlaps(iv[0], iv[2])).toBe(false);
    expect(iv[0].finished_at <= iv[1].started_at && iv[1].finished_at <= iv[2].started_at).toBe(true);
  }, 120_000);

  it("skip: a slot whose predecessor is still running is recorded as skipped (overlap)", async () => {
    const { ids } = await setup("skip", 1500);
    await waitUntil(allFinished(ids), 30_000, "three finished runs");
    const rows = await Promise.all(ids.map((id) => readRun(t.pool, id)));
    expect(rows.map((r) => [r.state, r.skip_reason, r.attempts])).toEqual([
      ["done", null, 1],
      ["skipped", "overlap", 0],
      ["skipped", "overlap", 0],
    ]);
  }, 120_000);
});
