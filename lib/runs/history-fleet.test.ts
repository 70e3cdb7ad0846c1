import { expect, it } from "vitest";
import { setClock } from "../testing/clock";
import { setupTestDatabase } from "../testing/db";
import { tupleReadsOf } from "../testing/tuple-reads";
import { listRuns, type RunFilter } from "./history";

// The runs list across many schedules that share their slots, as hourly schedules do at minute
// zero. The oracle is the runs table read back in SQL, and PostgreSQL's own tuple counters.
const t = setupTestDatabase({ poolSize: 2 });
const T0 = "2030-01-01T10:00:00Z";

/** N schedules, each with a done run at T0 - 1 h and at T0, and a pending run at T0 + 1 h. */
async function seed(n: number) {
  await t.pool.query(
    `INSERT INTO schedules (name, handler, cron, timezone, enabled, next_slot_at, partition, created_at, updated_at)
     SELECT 'hourly-' || g, 'noop', '0 * * * *', 'UTC', true, $2::timestamptz + interval '2 hours', 0, $2::timestamptz, $2::timestamptz FROM generate_series(1, $1::int) g`,
    [n, T0],
  );
  await t.pool.query(
    `INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, attempts, max_attempts, started_at, finished_at)
     SELECT s.id, 0, $1::timestamptz + h * interval '1 hour', $1::timestamptz + h * interval '1 hour', $1::timestamptz + h * interval '1 hour',
       CASE WHEN h = 1 THEN 'pending'::run_state ELSE 'done'::run_state END, CASE WHEN h = 1 THEN 0 ELSE 1 END, 3,
       CASE WHEN h < 1 THEN $1::timestamptz END, CASE WHEN h < 1 THEN $1::timestamptz END
     FROM schedules s, generate_series(-1, 1) h`,
    [T0],
  );
  await t.pool.query("ANALYZE schedules, runs, run_queue");
}

/** Every page of `filter`, 50 at a time, as the console pages it. */
async function everyPage(filter: RunFilter) {
  const ids: number[] = [];
  let cursor: string | null = null;
  do {
    const page = await listRuns(t.db, { ...filter, limit: 50, cursor });
    ids.push(...page.runs.map((r) => r.id));
    cursor = page.nextCursor;
  } while (cursor);
  return ids;
}

it("pages through every run of 300 schedules that share each slot exactly once, newest slot first, whatever the filter", async () => {
  await seed(300);
  const { rows } = await t.pool.query<{ id: string; schedule_id: string; state: string }>("SELECT id, schedule_id, state FROM runs ORDER BY scheduled_for DESC, slot_seq DESC, id DESC");
  const want = (keep: (r: { schedule_id: string; state: string }) => boolean) => rows.filter(keep).map((r) => Number(r.id));
  const some = [...new Set(rows.map((r) => r.schedule_id))].slice(0, 120);

  expect(await everyPage({})).toEqual(want(() => true));
  expect(await everyPage({ states: ["done"] })).toEqual(want((r) => r.state === "done"));
  expect(await everyPage({ states: ["pending"] })).toEqual(want((r) => r.state === "pending"));
  expect(await everyPage({ scheduleIds: some.map(Number) })).toEqual(want((r) => some.includes(r.schedule_id)));
  expect(await everyPage({ scheduleIds: some.map(Number), states: ["pending"] })).toEqual(want((r) => some.includes(r.schedule_id) && r.state === "pending"));
});

it("a tag scope pages through exactly its schedules' runs, whether it is narrow (a page per schedule) or wide (one walk filtered by tag)", async () => {
  await seed(300);
  // 100 schedules tagged wide (more than √300), 10 narrow (fewer), 5 of them both; the rest untagged.
  await t.pool.query(`UPDATE schedules SET tags = CASE WHEN id % 3 = 0 AND id % 60 = 3 THEN '{wide,narrow}' WHEN id % 3 = 0 THEN '{wide}' WHEN id % 60 = 1 THEN '{narrow}' ELSE '{}' END::text[]`);
  await t.pool.query("ANALYZE schedules");
  const { rows } = await t.pool.query<{ id: string; schedule_id: string; state: string; tags: string[] }>(
    "SELECT r.id, r.schedule_id, r.state, s.tags FROM runs r JOIN schedules s ON s.id = r.schedule_id ORDER BY r.scheduled_for DESC, r.slot_seq DESC, r.id DESC",
  );
  const want = (keep: (r: { schedule_id: string; state: string; tags: string[] }) => boolean) => rows.filter(keep).map((r) => Number(r.id));
  const tagged = (tag: string) => (r: { tags: string[] }) => r.tags.includes(tag);
  expect(new Set(rows.filter(tagged("wide")).map((r) => r.schedule_id)).size).toBe(100);
  expect(new Set(rows.filter(tagged("narrow")).map((r) => r.schedule_id)).size).toBe(10);

  for (const tag of ["wide", "narrow", "nobody"]) {
    expect(await everyPage({ tags: [tag] }), tag).toEqual(want(tagged(tag)));
    expect(await everyPage({ tags: [tag], states: ["pending"] }), tag).toEqual(want((r) => tagged(tag)(r) && r.state === "pending"));
    expect(await everyPage({ tags: [tag], states: ["done"] }), tag).toEqual(want((r) => tagged(tag)(r) && r.state === "done"));
  }
  expect(await everyPage({ tags: ["wide", "narrow"] })).toEqual(want((r) => tagged("wide")(r) || tagged("narrow")(r)));
  // A named set and a scope: both hold.
  const some = [...new Set(rows.map((r) => r.schedule_id))].slice(0, 40);
  for (const tag of ["wide", "narrow"]) {
    expect(await everyPage({ scheduleIds: some.map(Number), tags: [tag] }), tag).toEqual(want((r) => some.includes(r.schedule_id) && tagged(tag)(r)));
  }
});

it("the Runs page, as the console asks for it (no upcoming slots), reads a page of runs, not a page of every schedule's history", async () => {
  await seed(20_000);
  await setClock(t.pool, new Date(Date.parse(T0) + 30 * 60_000));
  for (const filter of [{ upcoming: false }, { upcoming: false, states: ["done" as const] }]) {
    const { result, reads } = await tupleReadsOf(t.url, t.pool, ["schedules", "runs"], (db) => listRuns(db, { ...filter, limit: 50 }));
    expect(result.runs).toHaveLength(50);
    // 51 runs and their schedules, with room for the catalog's and the view's own probes.
    expect(reads.runs, JSON.stringify(filter)).toBeLessThan(500);
    expect(reads.schedules, JSON.stringify(filter)).toBeLessThan(500);
  }
  // A tag-restricted token's Runs page: a page of runs whether its reach is half the fleet or ten schedules.
  await t.pool.query(`UPDATE schedules SET tags = CASE WHEN id % 2 = 0 THEN '{half}' WHEN id % 2000 = 1 THEN '{ten}' ELSE '{}' END::text[]`);
  await t.pool.query("ANALYZE schedules");
  for (const tag of ["half", "ten"]) {
    const { result, reads } = await tupleReadsOf(t.url, t.pool, ["schedules", "runs"], (db) => listRuns(db, { upcoming: false, tags: [tag], limit: 50 }));
    expect(result.runs).toHaveLength(tag === "half" ? 50 : 20);
    expect(reads.runs, tag).toBeLessThan(500);
    expect(reads.schedules, tag).toBeLessThan(500);
  }
}, 120_000);
