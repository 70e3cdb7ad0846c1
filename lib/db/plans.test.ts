import { beforeAll, describe, expect, it } from "vitest";
import { setupTestDatabase } from "../testing/db";
import { genericPlan, indexesWalked, seqScanned } from "../testing/plans";
import { preparedStatements, type Prepared } from "./prepared";
// Loaded for the statements they prepare.
import "../runs/claim";
import "../runs/finish";
import "../runs/lease";
import "../runs/next-due";

// The hot statements run with generic plans (createPool: plan_cache_mode = force_generic_plan),
// planned once without their values. A generic plan that scans a whole table would run for every
// batch, at the top of the hour too: each must reach rows through an index or by TID.
const t = setupTestDatabase({ reset: false });
beforeAll(async () => {
  // A queue of some size, as the planner will see it in production: 20,000 pending runs, analysed.
  await t.pool.query(`INSERT INTO schedules (name, handler, every_seconds, enabled, next_slot_at, partition, catch_up)
    SELECT 'plan-' || g, 'noop', 3600, false, '2100-01-01', g % 16, 'all' FROM generate_series(1, 2000) g`);
  await t.pool.query(`INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, origin, max_attempts)
    SELECT s.id, s.partition, '2030-01-01'::timestamptz + make_interval(hours => h), '2030-01-01'::timestamptz + make_interval(hours => h),
      '2030-01-01'::timestamptz + make_interval(hours => h), 'pending', 'schedule', 6
    FROM schedules s CROSS JOIN generate_series(1, 10) h`);
  await t.pool.query("VACUUM ANALYZE runs");
  await t.pool.query("VACUUM ANALYZE run_queue");
});

/** The generic plan of a prepared statement, as a pool connection runs it, its values all null. */
/** The generic plan a pool makes of a hot statement (its parameters as nulls: a generic plan is made without them). */
const hotPlan = (statement: Prepared) => genericPlan(t.pool, statement.text, statement.params.map(() => null));

describe("hot-path statements' generic plans", () => {
  it("knows every statement the claim, finish and heartbeat prepare", () => {
    const prefixes = new Set(preparedStatements.map((s) => s.name.replace(/_[0-9a-f]{16}$/, "")));
    expect([...prefixes].sort()).toEqual(["sk_adopt", "sk_claim", "sk_claim_exclusive", "sk_claim_exclusive_locks", "sk_claim_handlers", "sk_finish_done", "sk_finish_done_out", "sk_finish_other", "sk_finish_tid", "sk_finish_tid_out", "sk_heartbeat", "sk_next_due", "sk_rescue"]);
  });

  // Every pending run here has one handler (noop), as in a fleet of one handler, where the
  // statistics alone would say any handler holds every queued run (lib/db/sql/tables/run_queue.sql).
  it("the claim by handler walks run_queue_claim_handler_idx, never the partition's due runs of every handler", async () => {
    const statement = preparedStatements.find((s) => s.name.startsWith("sk_claim_handlers_"));
    expect(statement).toBeDefined();
    const walked = indexesWalked(await hotPlan(statement!));
    expect(walked).toContain("run_queue_claim_handler_idx");
    expect(walked).not.toContain("run_queue_claim_idx");
  });

  it.each(preparedStatements.filter((s) => !s.scanAllowed).map((s) => [s.name, s] as const))("%s reads rows by index or TID, never a whole table", async (_name, statement) => {
    expect(seqScanned(await hotPlan(statement))).toEqual([]);
  });
});
