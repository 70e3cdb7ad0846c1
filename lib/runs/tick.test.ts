import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import type { Run } from "../db/schema";
import { setClock } from "../testing/clock";
import { setupTestDatabase } from "../testing/db";
import { makeRun, makeSchedule } from "../testing/factories";
import { jitterOffsetMs } from "../schedules/jitter";
import { runLatenessPass } from "./lateness-pass";
import { tickOnce } from "./tick";

const t = setupTestDatabase();

const tick = (extra: Partial<Parameters<typeof tickOnce>[1]> = {}) =>
  tickOnce(t.db, { partitions: null, horizonSeconds: 120, graceSeconds: 30, ...extra });

async function runsOf(scheduleId: number): Promise<Run[]> {
  const r = await t.db.execute<Record<string, unknown>>(sql`SELECT * FROM runs WHERE schedule_id = ${scheduleId} ORDER BY scheduled_for`);
  const d = (v: unknown) => (v === null ? null : new Date(v as string));
  return r.rows.map((row) => ({
    scheduledFor: d(row.scheduled_for),
    state: row.state,
    origin: row.origin,
    skipReason: row.skip_reason,
    skippedUntil: d(row.skipped_until),
    skippedCount: row.skipped_count,
    coalescedInto: d(row.coalesced_into),
    dueAt: d(row.due_at),
    runAfter: d(row.run_after),
    maxAttempts: row.max_attempts,
    partition: row.partition,
  })) as unknown as Run[];
}

const at = (hhmm: string) => new Date(`2024-03-01T${hhmm}Z`);
const iso = (d: Date | null) => d?.toISOString().slice(11, 19) ?? null;

describe("the 15-minute job and the 10:02–10:52 outage (0, 1 and 3 runs)", () => {
  for (const [policy, expected] of [["skip", 0], ["latest", 1], ["all", 3]] as const) {
    it(`${policy} runs ${expected} of the missed slots 10:15, 10:30, 10:45`, async () => {
      await setClock(t.pool, at("10:01:00"));
      const s = await makeSchedule(t.db, { cron: "*/15 * * * *", catchUp: policy });
      await tick(); // 10:01: nothing within two minutes
      await setClock(t.pool, at("10:52:00"));
      await tick();
      const rows = await runsOf(s.id);
      const ran = rows.filter((r) => r.state === "pending" && r.scheduledFor < at("10:52:00"));
      expect(ran.length).toBe(expected);
      expect(ran.every((r) => r.origin === "catch_up")).toBe(true);
      if (policy === "latest") {
        expect(iso(ran[0].scheduledFor)).toBe("10:45:00");
        const c = rows.find((r) => r.skipReason === "coalesced")!;
        expect([iso(c.scheduledFor), iso(c.skippedUntil), c.skippedCount, iso(c.coalescedInto)]).toEqual(["10:15:00", "10:30:00", 2, "10:45:00"]);
      }
      if (policy === "skip") {
        const m = rows.find((r) => r.skipReason === "missed")!;
        expect([iso(m.scheduledFor), iso(m.skippedUntil), m.skippedCount]).toEqual(["10:15:00", "10:45:00", 3]);
      }
      // The next slot (11:00) is not materialised yet; the high-water mark says so.
      const hw = await t.db.execute<{ next_slot_at: Date }>(sql`SELECT next_slot_at FROM schedules WHERE id = ${s.id}`);
      expect(iso(new Date(hw.rows[0].next_slot_at))).toBe("11:00:00");
    });
  }
});

describe("runs materialised before an outage (the lateness pass)", () => {
  it("turns late, never-attempted pending runs into missed / coalesced / kept per policy", async () => {
    await setClock(t.pool, at("10:00:00"));
    const policies = ["skip", "latest", "all"] as const;
    const ids: number[] = [];
    for (const catchUp of policies) {
      const s = await makeSchedule(t.db, { everySeconds: 60, catchUp });
      ids.push(s.id);
    }
    await tick({ horizonSeconds: 300 }); // 10:00..10:05 materialised as pending
    await setClock(t.pool, at("10:03:40")); // workers were down; 10:00..10:03 are late
    const result = await tick({ horizonSeconds: 0 });
    expect(result.skipped).toBe(4);
    expect(result.coalesced).toBe(3);
    const [skip, latest, all] = await Promise.all(ids.map(runsOf));
    expect(skip.filter((r) => r.state === "pending").map((r) => iso(r.scheduledFor))).toEqual(["10:04:00", "10:05:00"]);
    expect(skip.filter((r) => r.skipReason === "missed")).toHaveLength(4);
    expect(latest.filter((r) => r.state === "pending").map((r) => iso(r.scheduledFor))).toEqual(["10:03:00", "10:04:00", "10:05:00"]);
    expect(latest.filter((r) => r.skipReason === "coalesced").every((r) => iso(r.coalescedInto) === "10:03:00")).toBe(true);
    expect(all.filter((r) => r.state === "pending")).toHaveLength(6);
  });

  it("locks only the runs it changes: a late run it keeps stays free for the claims", async () => {
    await setClock(t.pool, at("10:00:00"));
    const s = await makeSchedule(t.db, { everySeconds: 60, catchUp: "latest" });
    await tick({ horizonSeconds: 60 }); // 10:00 and 10:01 pending
    // 10:00 is missed (its successor 10:01 is due) and coalesced into 10:01, the newest due slot,
    // which is missed too (40 s > the grace) but kept: it runs. (At 10:05 the newest due slot
    // would be 10:05, not written yet, and both would be coalesced into it.)
    await setClock(t.pool, at("10:01:40"));
    const [older, newer] = await runsOf(s.id);
    expect([iso(older.scheduledFor), iso(newer.scheduledFor)]).toEqual(["10:00:00", "10:01:00"]);
    const claimer = await t.pool.connect();
    try {
      await t.db.transaction(async (tx) => {
        const r = await runLatenessPass(tx, { partitions: null, graceSeconds: 30 });
        expect(r.coalesced).toBe(1);
        // While the pass's transaction is open, a claimer still gets the run it kept.
        const free = await claimer.query(
          `SELECT scheduled_for FROM run_queue WHERE schedule_id = $1 AND state = 'pending' FOR UPDATE SKIP LOCKED`,
          [s.id],
        );
        expect(free.rows.map((row) => iso(new Date(row.scheduled_for)))).toEqual(["10:01:00"]);
      });
    } finally {
      claimer.release();
    }
  });

  it("runs only when asked: the worker's tick loop asks every few seconds, not every tick", async () => {
    await setClock(t.pool, at("10:00:00"));
    const s = await makeSchedule(t.db, { everySeconds: 60, catchUp: "skip" });
    await tick({ horizonSeconds: 0 }); // 10:00 pending
    await setClock(t.pool, at("10:05:00"));
    expect((await tick({ horizonSeconds: 0, latenessPass: false })).skipped).toBe(4); // 10:01-10:04, from the schedule
    expect((await runsOf(s.id)).find((r) => iso(r.scheduledFor) === "10:00:00")?.state).toBe("pending");
    expect((await tick({ horizonSeconds: 0 })).skipped).toBe(1);
  });

  it("leaves a late run alone when a claimer holds it", async () => {
    await setClock(t.pool, at("10:00:00"));
    const s = await makeSchedule(t.db, { everySeconds: 60, catchUp: "skip" });
    await tick({ horizonSeconds: 0 }); // 10:00 pending
    await setClock(t.pool, at("10:05:00"));
    const claimer = await t.pool.connect();
    try {
      await claimer.query("BEGIN");
      // As a claim does: it locks the run's queue row.
      await claimer.query(`SELECT 1 FROM run_queue WHERE schedule_id = $1 FOR UPDATE`, [s.id]);
      expect((await runLatenessPass(t.db, { partitions: null, graceSeconds: 30 })).skipped).toBe(0);
      await claimer.query("ROLLBACK");
    } finally {
      claimer.release();
    }
    expect((await runLatenessPass(t.db, { partitions: null, graceSeconds: 30 })).skipped).toBe(1);
  });

  it("leaves retries, manual and backfill runs alone", async () => {
    await setClock(t.pool, at("10:00:00"));
    const s = await makeSchedule(t.db, { everySeconds: 60, catchUp: "skip", maxLatenessSeconds: 60 });
    await makeRun(t.db, { scheduleId: s.id, scheduledFor: at("09:00:00"), origin: "manual" });
    await makeRun(t.db, { scheduleId: s.id, scheduledFor: at("09:01:00"), origin: "backfill" });
    await makeRun(t.db, { scheduleId: s.id, scheduledFor: at("09:02:00"), attempts: 1 });
    await tick({ horizonSeconds: 0 });
    const rows = await runsOf(s.id);
    expect(rows.filter((r) => r.state === "skipped")).toHaveLength(0);
  });
});

describe("the 5-minute job after a 40-minute outage (eight missed firings)", () => {
  it("all: runs each of the 8 missed slots once, as catch-up runs", async () => {
    await setClock(t.pool, at("10:00:00"));
    const s = await makeSchedule(t.db, { everySeconds: 300, catchUp: "all" });
    await tick(); // 10:00 materialised and (say) ran
    // As claim + finish leave it: the record done, the queue row gone.
    await t.db.execute(sql`WITH done AS (UPDATE runs SET state = 'done', attempts = 1 WHERE schedule_id = ${s.id} RETURNING id) DELETE FROM run_queue WHERE run_id IN (SELECT id FROM done)`);
    await setClock(t.pool, at("10:42:00")); // down 10:02–10:42
    const r = await tick();
    const caught = (await runsOf(s.id)).filter((x) => x.origin === "catch_up");
    expect(caught.map((x) => iso(x.scheduledFor))).toEqual(["10:05:00", "10:10:00", "10:15:00", "10:20:00", "10:25:00", "10:30:00", "10:35:00", "10:40:00"]);
    expect(r.created).toBe(8);
  });

  it("max lateness turns the oldest of them into one too-late skipped range", async () => {
    await setClock(t.pool, at("10:00:00"));
    const s = await makeSchedule(t.db, { everySeconds: 300, catchUp: "all", maxLatenessSeconds: 1200 });
    await tick();
    await setClock(t.pool, at("10:42:00"));
    const r = await tick();
    const rows = await runsOf(s.id);
    // 10:00 was materialised before the outage: the lateness pass marks it; 10:05–10:20 are one range row.
    const tooLate = rows.filter((x) => x.skipReason === "too_late");
    expect(tooLate.map((x) => [iso(x.scheduledFor), iso(x.skippedUntil), x.skippedCount])).toEqual([
      ["10:00:00", "10:00:00", 1],
      ["10:05:00", "10:20:00", 4],
    ]);
    expect(r.tooLate).toBe(5);
    expect(rows.filter((x) => x.origin === "catch_up").map((x) => iso(x.scheduledFor))).toEqual(["10:25:00", "10:30:00", "10:35:00", "10:40:00"]);
  });
});

describe("bounded history for skipped slots", () => {
  for (const catchUp of ["skip", "latest"] as const) {
    it(`a 1-second schedule after a week's outage (${catchUp}) writes a bounded number of rows`, async () => {
      await setClock(t.pool, at("10:00:00"));
      const s = await makeSchedule(t.db, { everySeconds: 1, catchUp });
      await tick();
      await setClock(t.pool, new Date(at("10:00:00").getTime() + 7 * 86_400_000));
      await tick();
      const r = await t.db.execute<{ rows: number; slots: number; ranges: number }>(sql`
        SELECT count(*)::int AS rows, coalesce(sum(coalesce(skipped_count, 1)), 0)::int AS slots,
               count(*) FILTER (WHERE skipped_count > 1)::int AS ranges
        FROM runs WHERE schedule_id = ${s.id}`);
      expect(r.rows[0].rows).toBeLessThan(400); // 2 × (horizon + grace) rows, not 604,800
      expect(r.rows[0].ranges).toBe(1);
      // Every slot from the first to the horizon is accounted for, exactly once.
      expect(r.rows[0].slots).toBe(7 * 86_400 + 121);
    });
  }

  it("caps the slots one schedule looks at per tick and continues next tick", async () => {
    await setClock(t.pool, at("10:00:00"));
    const s = await makeSchedule(t.db, { everySeconds: 1, catchUp: "all", nextSlotAt: at("09:00:00") });
    await tick({ maxSlotsPerSchedule: 500 });
    expect((await runsOf(s.id)).length).toBe(500);
    await tick({ maxSlotsPerSchedule: 500 });
    expect((await runsOf(s.id)).length).toBe(1000);
  });
});

describe("slot rows", () => {
  it("jitter moves due_at (and run_after), never the slot; max_attempts and partition come from the schedule", async () => {
    await setClock(t.pool, at("10:00:00"));
    const s = await makeSchedule(t.db, { everySeconds: 10, jitterSeconds: 30, retryMaxAttempts: 3 });
    await tick();
    const rows = await runsOf(s.id);
    expect(rows.length).toBe(13);
    for (const r of rows) {
      expect(r.scheduledFor.getTime() % 10_000).toBe(0);
      expect(r.dueAt.getTime() - r.scheduledFor.getTime()).toBe(jitterOffsetMs(s.id, r.scheduledFor, 30));
      expect(r.runAfter).toEqual(r.dueAt);
      expect(r.maxAttempts).toBe(3);
      expect(r.partition).toBe(s.partition);
    }
    expect(new Set(rows.map((r) => r.dueAt.getTime() - r.scheduledFor.getTime())).size).toBeGreaterThan(5);
  });

  it("advances from the stored slot: ticking again writes nothing new, and only the given partitions tick", async () => {
    await setClock(t.pool, at("10:00:00"));
    const s = await makeSchedule(t.db, { everySeconds: 60 });
    const other = (s.partition + 1) % 16;
    expect((await tick({ partitions: [other] })).created).toBe(0);
    // A worker holding no partition ticks nothing (and asks the database nothing).
    expect(await tick({ partitions: [] })).toEqual({ schedules: 0, created: 0, skipped: 0, coalesced: 0, tooLate: 0 });
    expect((await tick({ partitions: [s.partition] })).created).toBe(3);
    expect((await tick()).created).toBe(0);
  });

  it("ticks every held partition, a batch at a time, and skips schedules another ticker holds", async () => {
    await setClock(t.pool, at("10:59:00"));
    const made = [];
    for (const partition of [2, 5, 9]) for (let i = 0; i < 3; i++) made.push(await makeSchedule(t.db, { cron: "0 * * * *", partition, nextSlotAt: at("11:00:00") }));
    const outside = await makeSchedule(t.db, { cron: "0 * * * *", partition: 7, nextSlotAt: at("11:00:00") });
    // Another ticker is inside its transaction on one schedule of partition 5.
    const held = made[3];
    const other = await t.pool.connect();
    try {
      await other.query("BEGIN");
      await other.query("SELECT 1 FROM schedules WHERE id = $1 FOR UPDATE", [held.id]);
      const r = await tick({ partitions: [2, 5, 9], batchSize: 2, maxBatches: 20 });
      expect(r.schedules).toBe(8);
    } finally {
      await other.query("ROLLBACK");
      other.release();
    }
    const ticked = await t.db.execute<{ schedule_id: number }>(sql`SELECT schedule_id FROM runs WHERE scheduled_for = ${at("11:00:00")}`);
    expect(new Set(ticked.rows.map((r) => Number(r.schedule_id)))).toEqual(new Set(made.filter((s) => s.id !== held.id).map((s) => s.id)));
    expect((await runsOf(outside.id)).length).toBe(0);
    // Released, the held schedule is ticked on the next pass.
    expect((await tick({ partitions: [2, 5, 9] })).created).toBe(1);
  });

  it("ignores paused and deleted schedules", async () => {
    await setClock(t.pool, at("10:00:00"));
    await makeSchedule(t.db, { everySeconds: 60, enabled: false });
    await makeSchedule(t.db, { everySeconds: 60, deletedAt: at("09:00:00") });
    expect((await tick()).schedules).toBe(0);
  });
});
