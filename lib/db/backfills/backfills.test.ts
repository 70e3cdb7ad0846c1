// A backfill follows its migration once, in a transaction of its own. The runs an operator
// cancelled or discarded before `skip_reason` had those values are written here in plain SQL
// against the schema just before 0029, as that version stored them (skipped, no reason, the audit
// entry saying which), and their reasons are read back in plain SQL after the upgrade.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../testing/db";
import { firstMigrations, indexOfMigration } from "../../testing/migrations";
import { migrateDatabase } from "../migrate";

let t: TestDatabase;
const reasons = async () =>
  Object.fromEntries(
    (await t.pool.query<{ slot: Date; reason: string | null }>(`SELECT scheduled_for AS slot, skip_reason::text AS reason FROM runs ORDER BY scheduled_for`)).rows.map((r) => [
      r.slot.toISOString().slice(11, 16),
      r.reason,
    ]),
  );

beforeAll(async () => {
  t = await createTestDatabase({ template: "empty" });
  await migrateDatabase(t.url, { migrationsFolder: firstMigrations(indexOfMigration("0029_operator_skip_reasons")) });
  const s = await t.pool.query<{ id: string }>(`
    INSERT INTO schedules (name, handler, every_seconds, next_slot_at, partition) VALUES ('nightly', 'noop', 3600, '2030-01-01T06:00:00Z', 1) RETURNING id`);
  const scheduleId = Number(s.rows[0].id);
  const run = async (slot: string, state: string, skipReason: string | null) =>
    Number(
      (
        await t.pool.query<{ id: string }>(
          `INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, max_attempts, state, skip_reason)
           VALUES ($1, 1, $2, $2, $2, 3, $3, $4) RETURNING id`,
          [scheduleId, `2030-01-01T${slot}:00Z`, state, skipReason],
        )
      ).rows[0].id,
    );
  const audit = (action: string, runId: number, at: string) =>
    t.pool.query(`INSERT INTO audit_log (at, actor, actor_kind, action, target_type, target_id, schedule_id) VALUES ($1, 'ops', 'person', $2, 'run', $3, $4)`, [
      `2030-01-01T${at}:00Z`,
      action,
      String(runId),
      scheduleId,
    ]);
  const cancelled = await run("01:00", "skipped", null);
  await audit("run.cancel", cancelled, "01:30");
  const discarded = await run("02:00", "skipped", null);
  await audit("run.discard", discarded, "02:30");
  // Re-queued after a discard would be unusual, but the latest entry decides: here a cancel.
  const both = await run("03:00", "skipped", null);
  await audit("run.discard", both, "03:10");
  await audit("run.cancel", both, "03:20");
  // A policy skip keeps its own reason, even with an operator's entry on the run.
  const missed = await run("04:00", "skipped", "missed");
  await audit("run.cancel", missed, "04:30");
  // A finished run is never touched.
  const done = await run("05:00", "done", null);
  await audit("run.discard", done, "05:30");
});
afterAll(async () => {
  await t?.drop();
});

describe("the operator skip reasons backfill", () => {
  it("gives each run an operator settled the reason its latest audit entry names, and leaves every other run as it was", async () => {
    await migrateDatabase(t.url);
    expect(await reasons()).toEqual({ "01:00": "cancelled", "02:00": "discarded", "03:00": "cancelled", "04:00": "missed", "05:00": null });
    const done = await t.pool.query(`SELECT name FROM drizzle.slotkeeper_backfills`);
    expect(done.rows.map((r) => r.name)).toEqual(["operator_skip_reasons"]);
  });

  it("runs once: a later migrate leaves the runs alone", async () => {
    await t.pool.query(`UPDATE runs SET skip_reason = NULL WHERE scheduled_for = '2030-01-01T01:00:00Z'`);
    await migrateDatabase(t.url);
    expect((await reasons())["01:00"]).toBeNull();
  });

  it("runs again when its migration committed and it did not (a crash in between)", async () => {
    await t.pool.query(`DELETE FROM drizzle.slotkeeper_backfills`);
    await migrateDatabase(t.url);
    expect((await reasons())["01:00"]).toBe("cancelled");
  });
});
