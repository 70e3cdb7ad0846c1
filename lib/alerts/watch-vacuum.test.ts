import { describe, expect, it } from "vitest";
import { readStatusCounts } from "../health/status-counts";
import { setClock } from "../testing/clock";
import { setupTestDatabase } from "../testing/db";
import { evaluateAlerts, type EvaluateOptions } from "./evaluate";

// A pass that rewrote a large share of alert_watch vacuums and analyses it (lib/alerts/watch-vacuum.ts),
// and no other pass does. The oracle is PostgreSQL's own record of the table's vacuums and
// analyses (pg_stat_user_tables), which the server writes when each ends.
const t = setupTestDatabase({ poolSize: 3 });
const opts: EvaluateOptions & { vacuumMinRows: number } = { publicUrl: "http://console.test", reminderSeconds: 0, vacuumMinRows: 1000 };

async function maintenance() {
  const { rows } = await t.pool.query<{ vacuums: number; analyses: number }>(
    `SELECT vacuum_count::int AS vacuums, analyze_count::int AS analyses FROM pg_stat_user_tables WHERE relname = 'alert_watch'`,
  );
  return rows[0];
}

/** The plan and buffers of the Overview's count of schedules not judged yet, as it runs. */
async function notEvaluatedPlan(): Promise<string> {
  const { rows } = await t.pool.query<{ "QUERY PLAN": string }>(
    `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT count(*) FROM alert_watch w JOIN schedules s ON s.id = w.schedule_id WHERE w.status IS NULL AND s.deleted_at IS NULL`,
  );
  return rows.map((r) => r["QUERY PLAN"]).join("\n");
}

describe("alert_watch after a pass over much of the fleet", () => {
  it("the pass that judged most schedules vacuums and analyses alert_watch once; a pass over a few does not", async () => {
    await setClock(t.pool, new Date("2030-01-01T10:00:00Z"));
    await t.pool.query(
      `INSERT INTO schedules (name, handler, every_seconds, timezone, enabled, next_slot_at, partition, created_at, updated_at, catch_up)
       SELECT 'bulk-' || g, 'noop', 300, 'UTC', true, sk_now() + interval '300 s', 0, sk_now(), sk_now(), 'all' FROM generate_series(1, 3000) g`,
    );
    const before = await maintenance();
    expect((await readStatusCounts(t.db)).notEvaluated).toBe(3000);

    const first = await evaluateAlerts(t.db, opts);
    expect(first.checked).toBe(3000);
    const afterFirst = await maintenance();
    expect(afterFirst.vacuums).toBe(before.vacuums + 1);
    expect(afterFirst.analyses).toBe(before.analyses + 1);
    // The count the Overview reads now walks the partial index of unjudged rows, which holds none.
    expect((await readStatusCounts(t.db)).notEvaluated).toBe(0);
    const plan = await notEvaluatedPlan();
    expect(plan).toContain("alert_watch_unevaluated_idx");
    expect(plan).not.toMatch(/Seq Scan on alert_watch/);

    // 10 schedules changed: far below a fifth of the table and the floor.
    await t.pool.query(
      `INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, attempts, max_attempts, origin)
       SELECT id, partition, sk_now() - interval '1 day', sk_now() - interval '1 day', sk_now() - interval '1 day', 'dead', 3, 3, 'backfill'
       FROM schedules WHERE name IN (SELECT 'bulk-' || g FROM generate_series(1, 10) g)`,
    );
    const busy = await evaluateAlerts(t.db, opts);
    expect(busy.checked).toBe(10);
    expect(await maintenance()).toEqual(afterFirst);
  });
});
