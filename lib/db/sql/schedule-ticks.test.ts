// schedule_ticks is a copy of four facts of each schedule (partition, next slot, ticking, live),
// kept by triggers/schedules_ticks_insert.sql and _update.sql. The oracle is schedules itself, read
// in SQL after every kind of write a schedule gets: the copy must equal it row for row. And the
// reason the copy exists: the tick's advance of a schedule can be a HOT update of schedules. That
// takes two things (PostgreSQL's rule for HOT): no index of schedules names next_slot_at, in a
// column, an expression or a predicate (read from the catalog), and room on the page, which
// PostgreSQL counts (pg_stat_user_tables), not our code.
import { describe, expect, it } from "vitest";
import { SYSTEM_ACTOR } from "../../audit/record";
import { setPartitionCount } from "../../partitions/count";
import { tickOnce } from "../../runs/tick";
import { deleteSchedule, pauseSchedule, resumeSchedule, updateSchedule } from "../../schedules/mutations";
import { setClock } from "../../testing/clock";
import { createTestDatabase, setupTestDatabase } from "../../testing/db";
import { makeSchedule } from "../../testing/factories";
import { createDb, createPool } from "../client";

const t = setupTestDatabase();

/** Rows where schedule_ticks and schedules disagree, each side as text; empty when the copy is exact. */
async function disagreements(): Promise<string[]> {
  const { rows } = await t.pool.query<{ d: string }>(`
    WITH truth AS (SELECT id, partition, next_slot_at, enabled AND deleted_at IS NULL AS ticking, deleted_at IS NULL AS live FROM schedules),
         copy AS (SELECT schedule_id AS id, partition, next_slot_at, ticking, live FROM schedule_ticks)
    SELECT format('schedules %s / schedule_ticks %s', a, b) AS d FROM truth a FULL JOIN copy b ON a.id = b.id
    WHERE a IS DISTINCT FROM b`);
  return rows.map((r) => r.d);
}

const tick = () => tickOnce(t.db, { partitions: null, horizonSeconds: 120, graceSeconds: 30 });

describe("schedule_ticks", () => {
  it("equals each schedule's partition, next slot, pause and deletion after every kind of write", async () => {
    await setClock(t.pool, new Date("2026-03-01T10:00:00Z"));
    const a = await makeSchedule(t.db, { everySeconds: 60 });
    const b = await makeSchedule(t.db, { cron: "*/5 * * * *" });
    const c = await makeSchedule(t.db, { everySeconds: 30, enabled: false });
    // Many in one statement, as an apply or an import writes them.
    await t.pool.query(`INSERT INTO schedules (name, handler, every_seconds, next_slot_at, partition)
                        SELECT 'bulk-' || i, 'noop', 60, sk_now() + i * interval '1 second', 0 FROM generate_series(1, 50) i`);
    expect(await disagreements()).toEqual([]);
    expect((await t.pool.query(`SELECT count(*)::int AS n FROM schedule_ticks`)).rows[0].n).toBe(53);

    await tick();
    await setClock(t.pool, new Date("2026-03-01T10:07:00Z"));
    await tick();
    expect(await disagreements()).toEqual([]);

    await pauseSchedule(t.db, a.name, SYSTEM_ACTOR);
    const { rows: v } = await t.pool.query<{ version: number }>(`SELECT version FROM schedules WHERE id = $1`, [b.id]);
    await updateSchedule(t.db, b.name, { cron: "*/7 * * * *" }, v[0].version, SYSTEM_ACTOR);
    await resumeSchedule(t.db, c.name, SYSTEM_ACTOR);
    expect(await disagreements()).toEqual([]);

    await deleteSchedule(t.db, b.name, { keepHistory: true }, SYSTEM_ACTOR);
    await t.pool.query(`DELETE FROM schedules WHERE name = 'bulk-1'`);
    // An operator's SQL, and a repartition of the fleet.
    await t.pool.query(`UPDATE schedules SET next_slot_at = next_slot_at + interval '1 hour' WHERE name LIKE 'bulk-2%'`);
    await setPartitionCount(t.db, 4);
    expect(await disagreements()).toEqual([]);
    const { rows } = await t.pool.query<{ live: boolean; ticking: boolean }>(`SELECT live, ticking FROM schedule_ticks WHERE schedule_id = $1`, [b.id]);
    expect(rows).toEqual([{ live: false, ticking: false }]);
    expect((await t.pool.query(`SELECT count(*)::int AS n FROM schedule_ticks`)).rows[0].n).toBe(52);
  });

  it("no index of schedules names next_slot_at, so the tick's rewrite of it can be a HOT update", async () => {
    const { rows } = await t.pool.query<{ def: string }>(`SELECT pg_get_indexdef(indexrelid) AS def FROM pg_index WHERE indrelid = 'schedules'::regclass`);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.filter((r) => r.def.includes("next_slot_at"))).toEqual([]);
  });

  it("the tick's advance of a due schedule is a HOT update of schedules where its page has room", async () => {
    // A fleet whose slots fall one a second, ticked every second as a worker does: each tick
    // advances the schedule or two that came due, in its own transaction.
    const SCHEDULES = 100;
    const t0 = new Date("2026-03-01T10:00:00Z");
    const d = await createTestDatabase();
    try {
      await setClock(d.pool, new Date(t0.getTime() - 10_000));
      await d.pool.query(
        `INSERT INTO schedules (name, handler, every_seconds, next_slot_at, partition)
         SELECT 'hot-' || i, 'noop', 3600, $1::timestamptz + i * interval '1 second', 0 FROM generate_series(0, $2::int - 1) i`,
        [t0, SCHEDULES],
      );
      const counters = async () => {
        await d.pool.query("SELECT pg_stat_clear_snapshot()");
        const { rows } = await d.pool.query<{ upd: number; hot: number }>(`SELECT n_tup_upd::int AS upd, n_tup_hot_upd::int AS hot FROM pg_stat_user_tables WHERE relname = 'schedules'`);
        return rows[0];
      };
      const before = await counters();
      // The ticks on a pool of their own, closed before the counters are read: a backend reports
      // its counters when it exits.
      const pool = createPool(d.url, { max: 1 });
      const pid = (await pool.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0].pid;
      let advanced = 0;
      try {
        for (let s = 0; s < SCHEDULES; s++) {
          await setClock(d.pool, new Date(t0.getTime() + s * 1000));
          advanced += (await tickOnce(createDb(pool), { partitions: [0], horizonSeconds: 0, graceSeconds: 30 })).schedules;
        }
      } finally {
        await pool.end();
      }
      while ((await d.pool.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1`, [pid])).rowCount) await new Promise((r) => setTimeout(r, 10));
      const after = await counters();
      expect(advanced).toBe(SCHEDULES);
      expect(after.upd - before.upd).toBe(SCHEDULES);
      // Each page keeps room for some new versions (fillfactor); beyond that an update is HOT only
      // once the page is pruned, which any transaction open on the server can put off, so the count
      // is not all of them on a busy server. With an index naming next_slot_at it is none.
      expect(after.hot - before.hot).toBeGreaterThan(0);
      // Every schedule got its one slot and its high-water mark moved past it.
      const { rows } = await d.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM schedules s WHERE (SELECT count(*) FROM runs r WHERE r.schedule_id = s.id AND r.scheduled_for < s.next_slot_at) = 1`,
      );
      expect(rows[0].n).toBe(SCHEDULES);
    } finally {
      await d.drop();
    }
  });
});
