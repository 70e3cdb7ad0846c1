// run_queue holds the live part of every unfinished run; runs holds the record. These tests walk a
// run through every way it can move and check after each step that the two tables agree
// (findQueueMismatches), that a claim never writes the runs row, and that the triggers on runs keep
// the queue whole for writers that know nothing of it (an INSERT, a DELETE, a cascade, a TRUNCATE).
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { SYSTEM_ACTOR } from "../audit/record";
import { deleteSchedule, runNow, updateSchedule } from "../schedules/mutations";
import { advanceClock, setClock } from "../testing/clock";
import { setupTestDatabase } from "../testing/db";
import { makeRun, makeSchedule } from "../testing/factories";
import { readRun } from "../testing/runs";
import { claimRuns, claimRunsDetailed } from "./claim";
import { finishRuns } from "./finish";
import { heartbeatRuns } from "./lease";
import { findQueueMismatches } from "./queue-consistency";
import { requeueRuns } from "./requeue";
import { tickOnce } from "./tick";

const T0 = new Date("2030-01-01T10:00:00Z");

const t = setupTestDatabase({ clock: T0 });

const queueRows = async (runId: number) =>
  (await t.pool.query<{ state: string; attempts: number; lease_owner: string | null; overlap: string }>(
    "SELECT state::text, attempts, lease_owner, overlap::text FROM run_queue WHERE run_id = $1",
    [runId],
  )).rows;
const xmin = async (runId: number) => (await t.pool.query<{ xmin: string }>("SELECT xmin::text FROM runs WHERE id = $1", [runId])).rows[0].xmin;
const consistent = async () => expect(await findQueueMismatches(t.db)).toEqual({ missing: 0, orphaned: 0, wrongState: 0, duplicated: 0, staleCopies: 0 });

describe("run_queue beside runs", () => {
  it("a slot from the tick is queued; the claim moves only the queue row; the finish settles both", async () => {
    const s = await makeSchedule(t.db, { everySeconds: 60 });
    await tickOnce(t.db, { partitions: null, horizonSeconds: 0, graceSeconds: 30 });
    const [{ id }] = (await t.pool.query<{ id: number }>("SELECT id FROM runs WHERE schedule_id = $1", [s.id])).rows;
    expect(await queueRows(id)).toEqual([{ state: "pending", attempts: 0, lease_owner: null, overlap: "allow" }]);
    await consistent();

    const before = await xmin(id);
    const [run] = await claimRuns(t.db, { workerId: "w1", partitions: null, limit: 10 });
    expect(run).toMatchObject({ id, attempt: 1 });
    // The record is untouched by the claim (same row version); the live state says running.
    expect(await xmin(id)).toBe(before);
    expect((await t.pool.query("SELECT state::text, attempts FROM runs WHERE id = $1", [id])).rows[0]).toEqual({ state: "pending", attempts: 0 });
    expect(await readRun(t.pool, id)).toMatchObject({ state: "running", attempts: 1, lease_owner: "w1" });
    await consistent();

    await advanceClock(t.pool, 1500);
    expect(await finishRuns(t.db, "w1", [{ id, scheduleId: s.id, attempt: 1, outcome: "succeeded", durationMs: 1500 }])).toEqual({ applied: 1, stale: [] });
    expect(await queueRows(id)).toEqual([]);
    const done = (await t.pool.query("SELECT state::text, attempts, worker_id, started_at, finished_at, duration_ms FROM runs WHERE id = $1", [id])).rows[0];
    expect(done).toMatchObject({ state: "done", attempts: 1, worker_id: "w1", duration_ms: 1500 });
    expect(done.finished_at.getTime() - done.started_at.getTime()).toBe(1500);
    await consistent();
  });

  it("a manual run, whose slot carries microseconds, is claimed, renewed and finished", async () => {
    const s = await makeSchedule(t.db, { everySeconds: 3600, name: "micro" });
    await setClock(t.pool, new Date("2030-01-01T10:00:00.123Z"));
    await t.pool.query("UPDATE sk_clock SET frozen_at = frozen_at + interval '456 microseconds'");
    const manual = await runNow(t.db, "micro", SYSTEM_ACTOR);
    const [run] = await claimRuns(t.db, { workerId: "w1", partitions: null, limit: 10 });
    expect(run.id).toBe(manual.id);
    // Truncated to the millisecond, as the driver makes a Date of it.
    expect(run.scheduledFor).toEqual(new Date("2030-01-01T10:00:00.123Z"));
    expect((await heartbeatRuns(t.db, "w1", [{ id: run.id, scheduleId: s.id, attempt: run.attempt }])).has(run.id)).toBe(true);
    expect(await finishRuns(t.db, "w1", [{ id: run.id, scheduleId: s.id, attempt: run.attempt, outcome: "succeeded" }])).toEqual({ applied: 1, stale: [] });
    expect((await readRun(t.pool, run.id)).state).toBe("done");
    await consistent();
  });

  it("a success deletes the queue row where the claim or the last renewal left it, else finds it through the index", async () => {
    const s = await makeSchedule(t.db, {});
    const [a, b] = [await makeRun(t.db, { scheduleId: s.id }), await makeRun(t.db, { scheduleId: s.id, scheduledFor: new Date(T0.getTime() - 1000) })];
    const claimed = await claimRuns(t.db, { workerId: "w1", partitions: null, limit: 10 });
    const byId = new Map(claimed.map((c) => [c.id, c]));
    const tidOf = async (id: number) => (await t.pool.query<{ tid: string }>("SELECT ctid::text AS tid FROM run_queue WHERE run_id = $1", [id])).rows[0].tid;
    expect(byId.get(a.id)!.queueTid).toBe(await tidOf(a.id));
    // A renewal writes a new row version and says where.
    const renewed = await heartbeatRuns(t.db, "w1", [{ id: a.id, scheduleId: s.id, attempt: 1 }]);
    expect(renewed.get(a.id)).toBe(await tidOf(a.id));
    expect(renewed.get(a.id)).not.toBe(byId.get(a.id)!.queueTid);
    const r = await finishRuns(t.db, "w1", [
      { id: a.id, scheduleId: s.id, attempt: 1, outcome: "succeeded", queueTid: byId.get(a.id)!.queueTid }, // where it was: falls back
      { id: b.id, scheduleId: s.id, attempt: 1, outcome: "succeeded", queueTid: byId.get(b.id)!.queueTid },
    ]);
    expect(r).toEqual({ applied: 2, stale: [] });
    expect([(await readRun(t.pool, a.id)).state, (await readRun(t.pool, b.id)).state]).toEqual(["done", "done"]);
    // A tid that now holds nothing of ours, and a stale token, change nothing.
    expect(await finishRuns(t.db, "w1", [{ id: a.id, scheduleId: s.id, attempt: 1, outcome: "succeeded", queueTid: byId.get(a.id)!.queueTid }])).toEqual({ applied: 0, stale: [a.id] });
    await consistent();
  });

  it("retry, dead and re-queue keep the two in step, and the token only rises", async () => {
    const s = await makeSchedule(t.db, { retryMaxAttempts: 2 });
    const r = await makeRun(t.db, { scheduleId: s.id });
    const [first] = await claimRuns(t.db, { workerId: "w1", partitions: null, limit: 1 });
    await finishRuns(t.db, "w1", [{ id: r.id, attempt: first.attempt, outcome: "failed", error: "boom", retryDelaySeconds: 30 }]);
    expect(await queueRows(r.id)).toMatchObject([{ state: "pending", attempts: 1 }]);
    expect(await readRun(t.pool, r.id)).toMatchObject({ state: "pending", attempts: 1, last_error: "boom" });
    await consistent();
    await advanceClock(t.pool, 31_000);
    const [second] = await claimRuns(t.db, { workerId: "w2", partitions: null, limit: 1 });
    expect(second.attempt).toBe(2);
    await finishRuns(t.db, "w2", [{ id: r.id, attempt: 2, outcome: "failed", error: "boom again", retryDelaySeconds: 30 }]);
    expect(await queueRows(r.id)).toMatchObject([{ state: "dead", attempts: 2 }]);
    expect(await readRun(t.pool, r.id)).toMatchObject({ state: "dead", attempts: 2 });
    await consistent();
    expect((await requeueRuns(t.db, [r.id], SYSTEM_ACTOR)).requeued).toEqual([r.id]);
    expect(await queueRows(r.id)).toMatchObject([{ state: "pending", attempts: 2 }]);
    const [third] = await claimRuns(t.db, { workerId: "w3", partitions: null, limit: 1 });
    expect(third.attempt).toBe(3);
    await consistent();
  });

  it("an expired lease is rescued from the queue, and a final one leaves the run dead in both", async () => {
    const s = await makeSchedule(t.db, { retryMaxAttempts: 1, leaseSeconds: 5 });
    const r = await makeRun(t.db, { scheduleId: s.id });
    await claimRuns(t.db, { workerId: "w1", partitions: null, limit: 1 });
    await advanceClock(t.pool, 6_000);
    const { settled } = await claimRunsDetailed(t.db, { workerId: "w2", partitions: null, limit: 1 });
    expect(settled).toEqual([{ id: r.id, state: "dead" }]);
    expect(await queueRows(r.id)).toMatchObject([{ state: "dead" }]);
    expect(await readRun(t.pool, r.id)).toMatchObject({ state: "dead", attempts: 1, last_error: "lease expired on final attempt" });
    await consistent();
  });

  it("an edit rewrites what the queued runs carry, and the claim hands out the edit", async () => {
    const s = await makeSchedule(t.db, { name: "flip", overlap: "allow", payload: { v: 1 }, leaseSeconds: 60 });
    const [a, b] = [await makeRun(t.db, { scheduleId: s.id, scheduledFor: new Date(T0.getTime() - 2000) }), await makeRun(t.db, { scheduleId: s.id })];
    expect((await queueRows(a.id))[0].overlap).toBe("allow");
    await updateSchedule(t.db, "flip", { overlap: "forbid", payload: { v: 2 }, leaseSeconds: 30, retry: { maxAttempts: 3, baseSeconds: 5, capSeconds: 50 } }, 1, SYSTEM_ACTOR);
    expect([(await queueRows(a.id))[0].overlap, (await queueRows(b.id))[0].overlap]).toEqual(["forbid", "forbid"]);
    await consistent();
    // forbid: only the earlier one starts, with the new payload, lease and retry policy.
    const [first, ...others] = await claimRuns(t.db, { workerId: "w", partitions: null, limit: 10 });
    expect(others).toEqual([]);
    expect(first).toMatchObject({ id: a.id, payload: { v: 2 }, leaseSeconds: 30, retry: { maxAttempts: 3, baseSeconds: 5, capSeconds: 50 } });
    await updateSchedule(t.db, "flip", { overlap: "allow" }, 2, SYSTEM_ACTOR);
    expect((await claimRuns(t.db, { workerId: "w", partitions: null, limit: 10 })).map((x) => x.id)).toEqual([b.id]);
    await consistent();
  });

  it("schedules with the same handler, payload and retry policy share one run_settings row; an edit moves a schedule and its queued runs to another", async () => {
    const settingsOf = async (name: string) =>
      (await t.pool.query<{ id: number }>("SELECT settings_id::int AS id FROM schedules WHERE name = $1", [name])).rows[0].id;
    const queued = async (scheduleId: number) =>
      (await t.pool.query<{ id: number }>("SELECT DISTINCT settings_id::int AS id FROM run_queue WHERE schedule_id = $1", [scheduleId])).rows.map((r) => r.id);
    const a = await makeSchedule(t.db, { name: "same-a", handler: "noop", payload: { to: ["x", 1] } });
    const b = await makeSchedule(t.db, { name: "same-b", handler: "noop", payload: { to: ["x", 1] } });
    // A writer that knows nothing of run_settings (plain SQL, keys in another order) gets the same row.
    await t.pool.query(
      `INSERT INTO schedules (name, handler, payload, every_seconds, next_slot_at, partition) VALUES ('same-c', 'noop', '{"to": ["x", 1]}', 60, $1, 0)`,
      [T0],
    );
    const shared = await settingsOf("same-a");
    expect([await settingsOf("same-b"), await settingsOf("same-c")]).toEqual([shared, shared]);
    await makeSchedule(t.db, { name: "other", handler: "noop", payload: { to: ["y"] } });
    expect(await settingsOf("other")).not.toBe(shared);

    await makeRun(t.db, { scheduleId: a.id });
    await makeRun(t.db, { scheduleId: b.id });
    expect([await queued(a.id), await queued(b.id)]).toEqual([[shared], [shared]]);
    // An edit of a's payload points a, and a's queued run, at a row of its own; b keeps the shared one.
    await updateSchedule(t.db, "same-a", { payload: { to: ["z"] } }, 1, SYSTEM_ACTOR);
    const moved = await settingsOf("same-a");
    expect(moved).not.toBe(shared);
    expect([await queued(a.id), await queued(b.id)]).toEqual([[moved], [shared]]);
    // Editing it back finds the shared row again: one row per distinct set of settings.
    await updateSchedule(t.db, "same-a", { payload: { to: ["x", 1] } }, 2, SYSTEM_ACTOR);
    expect([await settingsOf("same-a"), ...(await queued(a.id))]).toEqual([shared, shared]);
    const rows = await t.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM run_settings WHERE payload IN ('{"to": ["x", 1]}', '{"to": ["y"]}', '{"to": ["z"]}')`);
    expect(rows.rows[0].n).toBe(3);
    // A settings_id written by hand is put right.
    await t.pool.query("UPDATE schedules SET settings_id = $1 WHERE id = $2", [await settingsOf("other"), b.id]);
    expect(await settingsOf("same-b")).toBe(shared);
    await consistent();
    const claimed = await claimRuns(t.db, { workerId: "w", partitions: null, limit: 10 });
    expect(claimed.map((c) => [c.scheduleName, c.payload]).sort()).toEqual([
      ["same-a", { to: ["x", 1] }],
      ["same-b", { to: ["x", 1] }],
    ]);
  });

  it("a payload with quotes, backslashes and non-ASCII text gets its settings row and is handed out as stored", async () => {
    const payload = { q: 'a"b\\c', path: "C:\\tmp\\x", s: "żółw ✓", n: [1.5, null, { "": "empty key" }] };
    const s = await makeSchedule(t.db, { name: "odd-payload", payload });
    await makeRun(t.db, { scheduleId: s.id });
    const [run] = await claimRuns(t.db, { workerId: "w", partitions: null, limit: 10 });
    expect(run.payload).toEqual(payload);
    await consistent();
  });

  it("inserts and deletes by any writer keep the queue whole: direct SQL, a schedule's cascade, TRUNCATE", async () => {
    const s = await makeSchedule(t.db, { name: "gone" });
    const ids = (
      await t.pool.query<{ id: number; state: string }>(
        `INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, max_attempts)
         SELECT $1, 0, x, x, x, st::run_state, 6 FROM unnest($2::timestamptz[], $3::text[]) AS u(x, st) RETURNING id, state::text`,
        [s.id, [T0, new Date(T0.getTime() + 60_000), new Date(T0.getTime() + 120_000)], ["pending", "dead", "done"]],
      )
    ).rows;
    expect((await queueRows(ids[0].id)).map((q) => q.state)).toEqual(["pending"]);
    expect((await queueRows(ids[1].id)).map((q) => q.state)).toEqual(["dead"]);
    expect(await queueRows(ids[2].id)).toEqual([]);
    await consistent();
    // A run is never written running: that state, with its lease, is the queue row's, made by a claim.
    await expect(
      t.pool.query(`INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, max_attempts) VALUES ($1, 0, $2, $2, $2, 'running', 6)`, [s.id, T0]),
    ).rejects.toThrow(/runs_state_recorded/);
    await t.pool.query("DELETE FROM runs WHERE id = $1", [ids[1].id]);
    expect(await queueRows(ids[1].id)).toEqual([]);
    await consistent();
    await claimRuns(t.db, { workerId: "w", partitions: null, limit: 1 });
    await deleteSchedule(t.db, "gone", { keepHistory: false }, SYSTEM_ACTOR);
    expect((await t.db.execute<{ n: number }>(sql`SELECT count(*)::int AS n FROM run_queue`)).rows[0].n).toBe(0);
    await makeRun(t.db, {});
    await t.pool.query("TRUNCATE runs CASCADE");
    expect((await t.db.execute<{ n: number }>(sql`SELECT count(*)::int AS n FROM run_queue`)).rows[0].n).toBe(0);
  });

  it("deleting a schedule but keeping its history withdraws what waits and lets what runs finish", async () => {
    const s = await makeSchedule(t.db, { name: "keep" });
    const running = await makeRun(t.db, { scheduleId: s.id, scheduledFor: new Date(T0.getTime() - 1000) });
    const [claimed] = await claimRuns(t.db, { workerId: "w", partitions: null, limit: 1 });
    expect(claimed.id).toBe(running.id);
    const waiting = await makeRun(t.db, { scheduleId: s.id });
    await deleteSchedule(t.db, "keep", { keepHistory: true }, SYSTEM_ACTOR);
    expect(await readRun(t.pool, waiting.id)).toMatchObject({ state: "skipped", skip_reason: "deleted" });
    expect(await readRun(t.pool, running.id)).toMatchObject({ state: "running" });
    await finishRuns(t.db, "w", [{ id: running.id, attempt: claimed.attempt, outcome: "succeeded" }]);
    expect((await readRun(t.pool, running.id)).state).toBe("done");
    await consistent();
  });
});
