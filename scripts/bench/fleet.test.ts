// The fleet bench end to end at a tiny size against a real server: the report carries every figure
// issue 26 lists, and what it says of the spike and the steady runs matches the runs rows, counted
// here independently (one run per hourly schedule at the due slot, started once, done).
import os from "node:os";
import { describe, expect, it } from "vitest";
import { setPartitionCount } from "../../lib/partitions/count";
import { createTestDatabase } from "../../lib/testing/db";
import { HOURLY_PREFIX, SPREAD_PREFIX } from "./fleet-seed";
import { runFleet } from "./fleet";
import { BENCH_DUE } from "./spike";

const SCHEDULES = 2_000;
const PARTITIONS = 8;

const figure = expect.any(Number);
const pair = { p50Ms: figure, p95Ms: figure, calls: figure };

describe("npm run bench -- --fleet", () => {
  it(`reports every fleet figure for ${SCHEDULES} schedules, its run counts matching the runs table`, async () => {
    const t = await createTestDatabase({ poolSize: 4 });
    try {
      await setPartitionCount(t.db, PARTITIONS);
      const fleet = await runFleet(t.pool, t.db, {
        url: t.url,
        schedules: SCHEDULES,
        steadySeconds: 5,
        workers: 2,
        batch: 100,
        partitions: PARTITIONS,
        concurrency: 200,
        pollIntervalMs: 200,
        tickMinutes: 2,
        readers: 4,
        readerPaceMs: 100,
      });
      expect(fleet).toMatchObject({
        schedules: SCHEDULES,
        seed: { hourly: 400, spread: 1600 },
        tick: { minutes: 2, secondsPerMinute: { p50: figure, max: figure }, runsPerMinute: figure, minHorizonAheadSeconds: figure, horizonStarved: false },
        spike: { lastStartedAfterSeconds: figure, latenessSeconds: { p50: figure, p99: figure }, ratio: { startsPerSecond: figure, completionsPerSecond: figure } },
        steadyLateness: { p50Seconds: figure, p99Seconds: figure, unstarted: 0 },
        alertPass: {
          firstSeconds: figure,
          idleSeconds: figure,
          busySeconds: figure,
          busyVacuumedSeconds: figure,
          peakRssMb: { first: figure, idle: figure, busy: figure, busyVacuumed: figure },
          changedSchedules: 20,
          checked: { first: SCHEDULES, idle: figure, busy: figure, busyVacuumed: figure },
        },
        spikeBuffers: { hit: figure, read: figure, readPerSpikeRun: figure, hitRatio: figure, byRelation: expect.any(Array) },
        spikeCpu: {
          seconds: figure,
          cores: os.cpus().length,
          machineBusyShare: figure,
          coreSeconds: { database: { workers: figure, readers: figure, other: figure, ended: figure }, workers: figure, harness: figure, other: figure },
        },
        metrics: { bytes: figure, seconds: figure },
        console: { readers: 4, paceMs: 100, overview: pair, search: pair, history: pair, runs: pair },
        databaseSizeMb: figure,
      });
      expect(fleet.workerRssMb).toHaveLength(2);
      // The split of the live processes adds up to no more than the cores could give over the window
      // (10 ms ticks of slack per process). Not `ended`: it holds the lives before the window of the
      // processes that ended within it and were never named (parallel workers, background processes).
      const { database, ...rest } = fleet.spikeCpu.coreSeconds;
      const used = database.workers + database.readers + database.other + rest.workers + rest.harness + rest.other;
      expect(fleet.spikeCpu.machineBusyShare).toBeLessThanOrEqual(1);
      expect(used).toBeLessThanOrEqual(fleet.spikeCpu.cores * fleet.spikeCpu.seconds + 0.5);
      // Idle means idle: the workers drained every run due by the frozen clock before they stopped,
      // so the second pass has nothing to read; the busy pass reads at least the 20 turned failing.
      expect(fleet.alertPass.checked.idle).toBe(0);
      expect(fleet.alertPass.checked.busy).toBeGreaterThanOrEqual(20);
      expect(fleet.alertPass.checked.busyVacuumed).toBeGreaterThanOrEqual(20);
      for (const read of ["overview", "search", "history", "runs"] as const) expect(fleet.console?.[read].calls).toBeGreaterThanOrEqual(5);

      // The oracle: each hourly schedule has exactly one run at the due slot, started and done.
      const { rows: bad } = await t.pool.query(
        `SELECT s.name, count(r.id)::int AS runs, count(r.started_at)::int AS started, count(*) FILTER (WHERE r.state = 'done')::int AS done
         FROM schedules s LEFT JOIN runs r ON r.schedule_id = s.id AND r.scheduled_for = $1
         WHERE s.name LIKE $2 GROUP BY s.name
         HAVING count(r.id) <> 1 OR count(r.started_at) <> 1 OR count(*) FILTER (WHERE r.state = 'done') <> 1`,
        [BENCH_DUE, `${HOURLY_PREFIX}%`],
      );
      expect(bad).toEqual([]);
      const { rows: hourly } = await t.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM schedules WHERE name LIKE $1`, [`${HOURLY_PREFIX}%`]);
      expect(hourly[0].n).toBe(400);
      expect(fleet.spike.runs).toBe(400);
      expect(fleet.spike.check).toEqual({ expected: 400, started: 400, done: 400, ok: true });
      expect(fleet.spike.raw.check).toEqual({ expected: 400, started: 400, done: 400, ok: true });
      // The steady figure counts the spread schedules' runs due in its window: the same count here.
      const { rows: steady } = await t.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM runs r JOIN schedules s ON s.id = r.schedule_id
         WHERE s.name LIKE $1 AND r.due_at >= $2 AND r.due_at < $3`,
        [`${SPREAD_PREFIX}%`, new Date(BENCH_DUE.getTime() - 10_000), new Date(BENCH_DUE.getTime() - 1_000)],
      );
      expect(fleet.steadyLateness.runs).toBe(steady[0].n);
      expect(steady[0].n).toBeGreaterThan(0);
      // The spread is what the seed says: intervals, crons in time zones, jitter.
      const { rows: kinds } = await t.pool.query<{ tz: number; jitter: number; minute: number; day: number }>(
        `SELECT count(*) FILTER (WHERE timezone <> 'UTC')::int AS tz, count(*) FILTER (WHERE jitter_seconds > 0)::int AS jitter,
                count(*) FILTER (WHERE every_seconds = 60)::int AS minute, count(*) FILTER (WHERE every_seconds = 86400)::int AS day
         FROM schedules WHERE name LIKE $1`,
        [`${SPREAD_PREFIX}%`],
      );
      expect(kinds[0]).toEqual({ tz: 320, jitter: 320, minute: 96, day: 96 });
      // The fleet is created on the bench's clock, as the API creates schedules: minutes before the
      // spike, not years (the wall clock), so no schedule is late for want of a success it never
      // had time to make. The alert passes' events say so: the two busy passes' failing ones, no late one.
      const { rows: created } = await t.pool.query<{ outside: number }>(
        `SELECT count(*)::int AS outside FROM schedules WHERE name LIKE 'fleet-%' AND (created_at > $1 OR created_at < $1::timestamptz - interval '1 minute')`,
        [new Date(BENCH_DUE.getTime() - 15_000)],
      );
      expect(created[0].outside).toBe(0);
      const { rows: events } = await t.pool.query<{ rule: string; n: number }>(`SELECT rule, count(*)::int AS n FROM alert_events WHERE kind = 'firing' GROUP BY rule ORDER BY rule`);
      expect(events).toEqual([{ rule: "failing", n: 40 }]);
    } finally {
      await t.drop();
    }
  }, 600_000);
});
