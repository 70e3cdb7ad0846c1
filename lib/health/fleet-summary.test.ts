// The Overview's oldest-pending list and wait histogram where the seeded fleet's test
// (app/api/schedules/fleet-list.route.test.ts) does not reach: schedules with many waiting runs,
// deleted schedules among the oldest, pending runs not due yet, and more waiting runs than the list
// walks. The oracle is a brute-force read of the runs table (every pending run, grouped and sorted
// in full), never the queue the summary reads.
import { beforeAll, describe, expect, it } from "vitest";
import { setClock } from "../testing/clock";
import { setupTestDatabase } from "../testing/db";
import { seedFleet } from "../testing/fleet";
import { LATENESS_BUCKETS } from "../metrics/worker-metrics";
import { getFleetSummary, PENDING_WALK, WORST_LIST_SIZE } from "./fleet-summary";

const t = setupTestDatabase({ reset: false });
const NOW = "2030-01-01T10:00:00Z";

/** Live schedules by their oldest due pending run, oldest first (id breaks ties): every run read. */
async function oracleOldest(): Promise<number[]> {
  const { rows } = await t.pool.query<{ id: string }>(
    `SELECT r.schedule_id AS id FROM runs r JOIN schedules s ON s.id = r.schedule_id
     WHERE r.state = 'pending' AND r.scheduled_for <= sk_now() AND s.deleted_at IS NULL
     GROUP BY r.schedule_id ORDER BY min(r.scheduled_for), r.schedule_id`,
  );
  return rows.map((r) => Number(r.id));
}

/** Every due pending run's wait in seconds, bucketed here with the bounds' arithmetic. */
async function oracleWaits(): Promise<number[]> {
  const { rows } = await t.pool.query<{ wait: number }>(
    `SELECT extract(epoch FROM sk_now() - scheduled_for)::float8 AS wait FROM runs WHERE state = 'pending' AND scheduled_for <= sk_now()`,
  );
  const counts = new Array<number>(LATENESS_BUCKETS.length + 1).fill(0);
  for (const { wait } of rows) {
    const k = LATENESS_BUCKETS.findIndex((below) => wait < below);
    counts[k === -1 ? LATENESS_BUCKETS.length : k]++;
  }
  return counts;
}

/** `perSchedule` extra pending runs for each of `ids`, a minute apart, the newest `fromMinutes` ago. */
async function addWaitingRuns(ids: number[], perSchedule: number, fromMinutes: number) {
  await t.pool.query(
    `INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, attempts, max_attempts)
     SELECT s.id, s.partition, a.at, a.at, a.at, 'pending', 0, 1
     FROM schedules s CROSS JOIN generate_series(0, $2::int - 1) k
     CROSS JOIN LATERAL (SELECT sk_now() - make_interval(mins => $3::int + k) - make_interval(secs => s.id % 60) AS at) a
     WHERE s.id = ANY($1::bigint[])`,
    [ids, perSchedule, fromMinutes],
  );
}

describe("the Overview's oldest waiting schedules and wait histogram", () => {
  let ids: number[] = [];
  beforeAll(async () => {
    await setClock(t.pool, NOW);
    await seedFleet(t.pool, 1_000);
    ids = (await t.pool.query<{ id: string }>("SELECT id FROM schedules ORDER BY id")).rows.map((r) => Number(r.id));
  }, 60_000);

  it("lists each schedule once by its oldest waiting run, skips deleted ones and counts every due run by its wait", async () => {
    // Twelve schedules with 40 waiting runs each, older than the seed's; a run not due yet.
    const backlogged = ids.filter((_, k) => k % 83 === 5).slice(0, 12);
    await addWaitingRuns(backlogged, 40, 100);
    await t.pool.query(
      `INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, attempts, max_attempts)
       SELECT id, partition, sk_now() - interval '3 days', sk_now() + interval '1 hour', sk_now() + interval '1 hour', 'pending', 0, 1 FROM schedules WHERE id = $1`,
      [ids[1]],
    );
    // Two of the oldest waiting schedules deleted: they leave the list, their runs still count.
    await t.pool.query("UPDATE schedules SET deleted_at = sk_now() WHERE id = ANY($1::bigint[])", [backlogged.slice(0, 2)]);
    const oldest = await oracleOldest();
    expect(oldest.length).toBeGreaterThan(WORST_LIST_SIZE);
    const s = await getFleetSummary(t.db);
    expect(s.worstOldestPending).toEqual(oldest.slice(0, WORST_LIST_SIZE));
    expect(s.worstOldestPending).not.toContain(backlogged[0]);
    expect(s.pendingWait.map((b) => b.count)).toEqual(await oracleWaits());
  });

  it(`stays in order when the oldest ${PENDING_WALK} waiting runs belong to fewer than ${WORST_LIST_SIZE} schedules`, async () => {
    // 20 schedules with more waiting runs between them than the walk reads, all older than the rest.
    const heavy = ids.filter((_, k) => k % 47 === 3).slice(0, 20);
    await addWaitingRuns(heavy, Math.ceil(PENDING_WALK / heavy.length) + 10, 10_000);
    const oldest = await oracleOldest();
    const s = await getFleetSummary(t.db);
    // A prefix of the true order, holding at least every heavy schedule, never out of order.
    expect(s.worstOldestPending.length).toBeGreaterThanOrEqual(heavy.length);
    expect(s.worstOldestPending).toEqual(oldest.slice(0, s.worstOldestPending.length));
    expect(new Set(s.worstOldestPending.slice(0, heavy.length))).toEqual(new Set(heavy));
    expect(s.pendingWait.map((b) => b.count)).toEqual(await oracleWaits());
  });
});
