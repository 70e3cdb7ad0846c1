import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setClock } from "../testing/clock";
import { createTestDatabase, type TestDatabase } from "../testing/db";
import { deriveStatus, getScheduleHealth, lateAfterSecondsFor } from "./schedule-health";

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 2 });
});
afterAll(async () => {
  await t?.drop();
});

async function makeSchedule(name: string, opts: { everySeconds?: number; cron?: string; enabled?: boolean; createdAt?: string; lateAfter?: number } = {}) {
  const { rows } = await t.pool.query<{ id: number }>(
    `INSERT INTO schedules (name, handler, cron, every_seconds, enabled, next_slot_at, partition, created_at, late_after_seconds)
     VALUES ($1, 'noop', $2, $3, $4, sk_now(), 0, $5, $6) RETURNING id`,
    [name, opts.cron ?? null, opts.cron ? null : (opts.everySeconds ?? 300), opts.enabled ?? true, opts.createdAt ?? "2030-01-01T09:00:00Z", opts.lateAfter ?? null],
  );
  return Number(rows[0].id);
}

async function makeRun(scheduleId: number, slot: string, state: string, finishedAt?: string) {
  await t.pool.query(
    `INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, max_attempts, finished_at)
     VALUES ($1, 0, $2, $2, $2, $3, 6, $4)`,
    [scheduleId, slot, state, finishedAt ?? null],
  );
}

describe("lateAfterSecondsFor", () => {
  const base = { enabled: true, cron: null, everySeconds: 300, timezone: "UTC", lateAfterSeconds: null, lateGraceSeconds: null, backlogAfterSeconds: null };
  it("is two intervals plus the default grace, or the overrides", () => {
    const now = new Date("2030-01-01T10:00:00Z");
    expect(lateAfterSecondsFor(base, now)).toBe(630);
    expect(lateAfterSecondsFor({ ...base, lateGraceSeconds: 0 }, now)).toBe(600); // the article's 10 minutes
    expect(lateAfterSecondsFor({ ...base, lateAfterSeconds: 42 }, now)).toBe(42);
    expect(lateAfterSecondsFor({ ...base, everySeconds: null, cron: "0 * * * *" }, now)).toBe(7230);
  });

  it("works out each cron expression and zone for itself at one instant (gaps are remembered per expression)", () => {
    const now = new Date("2030-03-31T00:30:00Z");
    const cron = { ...base, everySeconds: null };
    expect(lateAfterSecondsFor({ ...cron, cron: "0 * * * *" }, now)).toBe(7230);
    expect(lateAfterSecondsFor({ ...cron, cron: "*/5 * * * *" }, now)).toBe(630);
    expect(lateAfterSecondsFor({ ...cron, cron: "0 * * * *" }, now)).toBe(7230);
    // Daily at 02:30 in Berlin: that night (DST starts) the next two slots are 23 h apart, in UTC 24 h.
    const daily = { ...cron, cron: "30 2 * * *" };
    expect(lateAfterSecondsFor({ ...daily, timezone: "UTC" }, now)).toBe(2 * 86_400 + 30);
    expect(lateAfterSecondsFor({ ...daily, timezone: "Europe/Berlin" }, now)).not.toBe(2 * 86_400 + 30);
  });
});

describe("deriveStatus", () => {
  const n = { enabled: true, sinceLastSuccessSeconds: 10, ageSeconds: 1000, deadRuns: 0, oldestPendingAgeSeconds: null };
  it("orders paused, failing, late, backlogged, healthy", () => {
    expect(deriveStatus(n, 630, 300)).toBe("healthy");
    expect(deriveStatus({ ...n, oldestPendingAgeSeconds: 301 }, 630, 300)).toBe("backlogged");
    expect(deriveStatus({ ...n, sinceLastSuccessSeconds: 631, oldestPendingAgeSeconds: 301 }, 630, 300)).toBe("late");
    expect(deriveStatus({ ...n, sinceLastSuccessSeconds: 631, deadRuns: 1 }, 630, 300)).toBe("failing");
    expect(deriveStatus({ ...n, deadRuns: 1, enabled: false }, 630, 300)).toBe("paused");
  });
  it("judges a schedule that never succeeded by its age", () => {
    expect(deriveStatus({ ...n, sinceLastSuccessSeconds: null, ageSeconds: 100 }, 630, 300)).toBe("healthy");
    expect(deriveStatus({ ...n, sinceLastSuccessSeconds: null, ageSeconds: 700 }, 630, 300)).toBe("late");
  });
});

describe("getScheduleHealth", () => {
  it("reads the three numbers against the database clock", async () => {
    await setClock(t.pool, "2030-01-01T10:00:00Z");
    const ok = await makeSchedule("ok");
    await makeRun(ok, "2030-01-01T09:50:00Z", "done", "2030-01-01T09:50:02Z");
    await makeRun(ok, "2030-01-01T09:55:00Z", "done", "2030-01-01T09:55:03Z");
    await makeRun(ok, "2030-01-01T10:05:00Z", "pending"); // materialised ahead: not yet waiting

    const stuck = await makeSchedule("stuck");
    await makeRun(stuck, "2030-01-01T09:30:00Z", "done", "2030-01-01T09:30:01Z");
    await makeRun(stuck, "2030-01-01T09:35:00Z", "dead", "2030-01-01T09:36:00Z");
    await makeRun(stuck, "2030-01-01T09:40:00Z", "pending");
    await makeRun(stuck, "2030-01-01T09:45:00Z", "pending");

    const paused = await makeSchedule("paused", { enabled: false });
    const health = await getScheduleHealth(t.db, [ok, stuck, paused]);

    expect(health.get(ok)).toMatchObject({ sinceLastSuccessSeconds: 297, deadRuns: 0, oldestPendingAgeSeconds: null, status: "healthy", lateAfterSeconds: 630 });
    expect(health.get(stuck)).toMatchObject({ sinceLastSuccessSeconds: 1799, deadRuns: 1, oldestPendingAgeSeconds: 1200, status: "failing" });
    expect(health.get(paused)).toMatchObject({ sinceLastSuccessSeconds: null, deadRuns: 0, status: "paused" });
  });

  it("calls a schedule late once since-last-success passes its threshold, backlogged on an old pending run", async () => {
    await setClock(t.pool, "2030-01-01T10:00:00Z");
    const late = await makeSchedule("late", { lateAfter: 600 });
    await makeRun(late, "2030-01-01T09:45:00Z", "done", "2030-01-01T09:45:00Z");
    const slow = await makeSchedule("slow");
    await makeRun(slow, "2030-01-01T09:55:00Z", "done", "2030-01-01T09:59:00Z");
    await makeRun(slow, "2030-01-01T09:50:00Z", "pending");
    const health = await getScheduleHealth(t.db, [late, slow]);
    expect(health.get(late)?.status).toBe("late");
    expect(health.get(slow)).toMatchObject({ status: "backlogged", oldestPendingAgeSeconds: 600, backlogAfterSeconds: 300 });
    expect((await getScheduleHealth(t.db, [])).size).toBe(0);
  });
});
