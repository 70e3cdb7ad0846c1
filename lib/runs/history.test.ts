import { beforeAll, expect, it } from "vitest";
import { setupTestDatabase } from "../testing/db";
import { makeRun, makeSchedule } from "../testing/factories";
import { getRunDetail, listRuns, parseRunQuery } from "./history";

const t = setupTestDatabase({ poolSize: 2, reset: false });
let a: number;
let b: number;
beforeAll(async () => {
  [a, b] = [(await makeSchedule(t.db, { name: "a" })).id, (await makeSchedule(t.db, { name: "b" })).id];
  // 25 slots each; microsecond slots (which a JS Date cannot hold) make sure the cursor keeps full precision.
  await t.pool.query(
    `INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, max_attempts)
     SELECT s.id, 0, timestamptz '2030-01-01T10:00:00.000001Z' + g * interval '1 minute', timestamptz '2030-01-01' , timestamptz '2030-01-01',
       CASE WHEN g % 5 = 0 THEN 'dead'::run_state ELSE 'done'::run_state END, 3
     FROM unnest($1::bigint[]) s(id), generate_series(0, 24) g`,
    [[a, b]],
  );
});

it("pages a schedule's history newest first without gaps or repeats", async () => {
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const page = await listRuns(t.db, { scheduleIds: [a], limit: 10, cursor });
    seen.push(...page.runs.map((r) => r.scheduledFor));
    cursor = page.nextCursor;
  } while (cursor);
  expect(seen).toHaveLength(25);
  expect(new Set(seen).size).toBe(25);
  expect([...seen].sort().reverse()).toEqual(seen);
});

it("merges schedules and filters by state and time", async () => {
  const all = await listRuns(t.db, { limit: 4 });
  expect(all.runs.map((r) => r.scheduleName).sort()).toEqual(["a", "a", "b", "b"]);
  const dead = await listRuns(t.db, { states: ["dead"], limit: 100 });
  expect(dead.runs).toHaveLength(10);
  expect(dead.nextCursor).toBeNull();
  const window = await listRuns(t.db, { scheduleIds: [b], from: new Date("2030-01-01T10:10:00Z"), to: new Date("2030-01-01T10:15:00Z") });
  expect(window.runs).toHaveLength(5);
});

it("returns one run with its attempts and idempotency key", async () => {
  const { rows } = await t.pool.query<{ id: number }>(`SELECT id FROM runs WHERE schedule_id = $1 ORDER BY scheduled_for LIMIT 1`, [a]);
  const id = Number(rows[0].id);
  await t.pool.query(
    `INSERT INTO attempts (run_id, attempt, worker_id, started_at, finished_at, outcome, error, duration_ms)
     VALUES ($1, 1, 'w1', '2030-01-01T10:00:01Z', '2030-01-01T10:00:02Z', 'failed', 'boom', 1000),
            ($1, 2, 'w2', '2030-01-01T10:01:01Z', '2030-01-01T10:01:02Z', 'succeeded', null, 1000)`,
    [id],
  );
  // As the worker leaves it: the latest attempt's worker stays on the run row.
  await t.pool.query(`WITH done AS (UPDATE runs SET state = 'done', attempts = 2, worker_id = 'w2' WHERE id = $1 RETURNING id) DELETE FROM run_queue WHERE run_id IN (SELECT id FROM done)`, [id]);
  const run = await getRunDetail(t.db, id);
  expect(run.attemptsList.map((x) => [x.attempt, x.workerId, x.outcome, x.error])).toEqual([
    [1, "w1", "failed", "boom"],
    [2, "w2", "succeeded", null],
  ]);
  expect(run.workerId).toBe("w2");
  expect(run.idempotencyKey).toBe(`sk:${a}:2030-01-01T10:00:00.000Z`);
  await expect(getRunDetail(t.db, 999_999)).rejects.toMatchObject({ kind: "not_found" });
});

it("lists a first-attempt success, which writes no attempts row, from the run row", async () => {
  const { rows } = await t.pool.query<{ id: number }>(`SELECT id FROM runs WHERE schedule_id = $1 ORDER BY scheduled_for DESC LIMIT 1`, [b]);
  const id = Number(rows[0].id);
  await t.pool.query(
    `WITH done AS (UPDATE runs SET state = 'done', attempts = 1, worker_id = 'w9', started_at = '2030-01-01T10:00:01Z',
       finished_at = '2030-01-01T10:00:03Z', duration_ms = 2000 WHERE id = $1 RETURNING id) DELETE FROM run_queue WHERE run_id IN (SELECT id FROM done)`,
    [id],
  );
  const run = await getRunDetail(t.db, id);
  expect(run.attemptsList).toEqual([
    { attempt: 1, workerId: "w9", startedAt: "2030-01-01T10:00:01.000Z", finishedAt: "2030-01-01T10:00:03.000Z", outcome: "succeeded", error: null, durationMs: 2000, output: null },
  ]);
  expect(run.workerId).toBe("w9");
  const page = await listRuns(t.db, { scheduleIds: [b], limit: 1 });
  expect(page.runs[0]).toMatchObject({ id, workerId: "w9" });
});

it("validates the query string", async () => {
  expect(parseRunQuery(new URLSearchParams("state=dead,pending&limit=5"))).toMatchObject({ states: ["dead", "pending"], limit: 5 });
  expect(() => parseRunQuery(new URLSearchParams("state=zombie"))).toThrow(/state must be/);
  expect(() => parseRunQuery(new URLSearchParams("from=yesterday"))).toThrow(/ISO 8601/);
  await expect(listRuns(t.db, { cursor: "garbage" })).rejects.toMatchObject({ field: "cursor" });
});

it("keeps one row per slot but any number of manual runs at one instant, and pages through them once each", async () => {
  const s = await t.pool.query<{ id: number }>(`INSERT INTO schedules (name, handler, every_seconds, next_slot_at, partition) VALUES ('c', 'noop', 60, now(), 0) RETURNING id`);
  const c = Number(s.rows[0].id);
  const at = "2030-01-01T12:00:00Z";
  const insert = (origin: string) =>
    t.pool.query(
      `INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, origin, max_attempts)
       VALUES ($1, 0, $2, $2, $2, 'done', $3::run_origin, 3) ON CONFLICT (schedule_id, scheduled_for, slot_seq) DO NOTHING`,
      [c, at, origin],
    );
  expect((await insert("schedule")).rowCount).toBe(1);
  // The slot exists once, whichever origin asks for it again.
  expect((await insert("catch_up")).rowCount).toBe(0);
  expect((await insert("backfill")).rowCount).toBe(0);
  // Manual runs are not slots: three of them at the same instant all stay.
  for (let i = 0; i < 3; i++) expect((await insert("manual")).rowCount).toBe(1);

  const seen: { id: number; origin: string }[] = [];
  let cursor: string | null = null;
  do {
    const page = await listRuns(t.db, { scheduleIds: [c], limit: 1, cursor });
    seen.push(...page.runs.map((r) => ({ id: r.id, origin: r.origin })));
    cursor = page.nextCursor;
  } while (cursor);
  // Newest manual run first, the schedule's own slot last.
  expect(seen.map((r) => r.origin)).toEqual(["manual", "manual", "manual", "schedule"]);
  const manualIds = seen.slice(0, 3).map((r) => r.id);
  expect(manualIds).toEqual([...manualIds].sort((x, y) => y - x));
});

it("pages runs of a queued state (read through run_queue) in the same order, manual runs of one instant once each", async () => {
  const { id: d } = await makeSchedule(t.db, { name: "d" });
  const at = new Date("2030-01-01T13:00:00Z");
  const ids = [await makeRun(t.db, { scheduleId: d, scheduledFor: at, state: "dead" })];
  for (let i = 0; i < 3; i++) ids.push(await makeRun(t.db, { scheduleId: d, scheduledFor: at, state: "dead", origin: "manual" }));
  const seen: number[] = [];
  let cursor: string | null = null;
  do {
    const page = await listRuns(t.db, { scheduleIds: [d], states: ["dead"], limit: 1, cursor });
    seen.push(...page.runs.map((r) => r.id));
    cursor = page.nextCursor;
  } while (cursor);
  // The slot_seq order of the history: newest manual run first, the schedule's own slot last.
  const [scheduled, ...manual] = ids.map((r) => r.id);
  expect(seen).toEqual([...manual.reverse(), scheduled]);
});
