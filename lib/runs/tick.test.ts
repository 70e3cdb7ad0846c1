import { sql } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Run } from "../db/schema";
import { setClock } from "../testing/clock";
import { createTestDatabase, type TestDatabase } from "../testing/db";
import { makeRun, makeSchedule } from "../testing/factories";
import { tickOnce } from "./tick";

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t?.drop();
});
beforeEach(async () => {
  await t.db.execute(sql`TRUNCATE schedules CASCADE`);
});

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

describe("the 15-minute job and the 10:02–10:52 outage (article: 0, 1 and 3 runs)", () => {
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
