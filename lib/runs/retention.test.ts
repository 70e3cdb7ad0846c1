import { describe, expect, it } from "vitest";
import { setupTestDatabase } from "../testing/db";
import { makeAttempt, makeRun, makeSchedule } from "../testing/factories";
import { deleteExpiredRuns, getRetentionInfo } from "./retention";

const NOW = new Date("2030-06-01T12:00:00Z");
const daysAgo = (d: number) => new Date(NOW.getTime() - d * 86_400_000);

const schedule = async (name: string, o: { retentionDays?: number; retentionMaxRuns?: number } = {}) => (await makeSchedule(t.db, { name, ...o })).id;

/** A run of slot `at` in `state`: a finished one ended at its slot, a done one with its attempts row. */
async function run(scheduleId: number, at: Date, state: "pending" | "done" | "dead" | "skipped"): Promise<number> {
  const finished = state === "done" || state === "dead";
  const { id } = await makeRun(t.db, { scheduleId, scheduledFor: at, state, maxAttempts: 3, attempts: 1, finishedAt: finished ? at : undefined });
  if (state === "done") await makeAttempt(t.db, { runId: id, workerId: "w", startedAt: at, finishedAt: at });
  return id;
}

async function remaining(scheduleId: number): Promise<string[]> {
  const { rows } = await t.pool.query<{ state: string; days: number }>(
    `SELECT state, round(extract(epoch FROM ($2::timestamptz - scheduled_for)) / 86400)::int AS days FROM runs WHERE schedule_id = $1 ORDER BY scheduled_for`,
    [scheduleId, NOW],
  );
  return rows.map((r) => `${r.state}@${r.days}d`);
}

async function sweep(opts: Parameters<typeof deleteExpiredRuns>[1] = {}): Promise<number> {
  let cursor = 0;
  let total = 0;
  for (let i = 0; i < 1000; i++) {
    const p = await deleteExpiredRuns(t.db, { ...opts, afterScheduleId: cursor });
    total += p.deleted;
    cursor = p.nextScheduleId;
    if (p.sweepDone) return total;
  }
  throw new Error("sweep did not finish");
}

const t = setupTestDatabase({ clock: NOW });

describe("retention", () => {
  it("deletes done and skipped runs older than the period (global or per schedule), keeps dead and unfinished ones", async () => {
    const global = await schedule("global");
    for (const [i, s] of (["done", "skipped", "dead", "pending"] as const).entries()) await run(global, daysAgo(40 + i / 1440), s);
    await run(global, daysAgo(10), "done");
    const short = await schedule("short", { retentionDays: 5 });
    await run(short, daysAgo(10), "done");
    await run(short, daysAgo(1), "skipped");

    expect(await sweep({ retentionDays: 30 })).toBe(3);
    expect(await remaining(global)).toEqual(["pending@40d", "dead@40d", "done@10d"]);
    expect(await remaining(short)).toEqual(["skipped@1d"]);
    const { rows } = await t.pool.query(`SELECT count(*)::int AS n FROM attempts a LEFT JOIN runs r ON r.id = a.run_id WHERE r.id IS NULL`);
    expect(rows[0].n).toBe(0);
  });

  it("caps rows per schedule, deleting only finished runs beyond the newest N", async () => {
    const capped = await schedule("capped", { retentionMaxRuns: 3 });
    await run(capped, daysAgo(6), "done");
    await run(capped, daysAgo(5), "dead");
    await run(capped, daysAgo(4), "skipped");
    for (const d of [3, 2, 1]) await run(capped, daysAgo(d), "done");
    await sweep({ retentionDays: 30, maxRunsPerSchedule: 100 });
    expect(await remaining(capped)).toEqual(["dead@5d", "done@3d", "done@2d", "done@1d"]);
  });

  it("works in small batches and sweeps many schedules with a cursor", async () => {
    const ids: number[] = [];
    for (let i = 0; i < 7; i++) {
      const id = await schedule(`many-${i}`);
      ids.push(id);
      for (let d = 0; d < 5; d++) await run(id, daysAgo(100 + d), "done");
      await run(id, daysAgo(2), "done");
    }
    const first = await deleteExpiredRuns(t.db, { retentionDays: 30, batchSize: 2, schedulesPerPass: 3, afterScheduleId: ids[0] - 1 });
    expect(first.deleted).toBe(2);
    expect(await sweep({ retentionDays: 30, batchSize: 2, schedulesPerPass: 3 })).toBe(7 * 5 - 2);
    for (const id of ids) expect(await remaining(id)).toEqual(["done@2d"]);
  });

  it("does nothing while another worker sweeps", async () => {
    const holder = await t.pool.connect();
    try {
      await holder.query(`SELECT pg_advisory_lock(${0x736b2d726574656en.toString()})`);
      expect((await deleteExpiredRuns(t.db)).ran).toBe(false);
      await holder.query(`SELECT pg_advisory_unlock_all()`);
      expect((await deleteExpiredRuns(t.db)).ran).toBe(true);
    } finally {
      holder.release();
    }
  });

  it("says how far back a schedule's history goes", async () => {
    const id = await schedule("info", { retentionDays: 7 });
    await run(id, daysAgo(3), "done");
    await run(id, daysAgo(1), "done");
    const info = await getRetentionInfo(t.db, { scheduleId: id, defaults: { retentionDays: 30, maxRunsPerSchedule: 500 } });
    expect(info).toEqual({ retentionDays: 7, maxRuns: 500, keptSince: daysAgo(7).toISOString(), oldestRunAt: daysAgo(3).toISOString(), storedRuns: 2 });
    const global = await getRetentionInfo(t.db, { defaults: { retentionDays: 30 } });
    expect(global.retentionDays).toBe(30);
    expect(global.keptSince).toBe(daysAgo(30).toISOString());
    expect(global.oldestRunAt).toBeNull();
  });
});
