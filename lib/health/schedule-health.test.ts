import { describe, expect, it } from "vitest";
import { setClock } from "../testing/clock";
import { setupTestDatabase } from "../testing/db";
import { makeRun, makeSchedule } from "../testing/factories";
import { deriveStatus, getScheduleHealth, lateAfterSecondsFor } from "./schedule-health";

const t = setupTestDatabase({ poolSize: 2 });

/** A schedule created at 09:00 (every 300 s unless told otherwise). */
const schedule = async (name: string, o: Parameters<typeof makeSchedule>[1] = {}) =>
  (await makeSchedule(t.db, { name, everySeconds: 300, createdAt: new Date("2030-01-01T09:00:00Z"), ...o })).id;
const run = (scheduleId: number, slot: string, state: "pending" | "done" | "dead", finishedAt?: string) =>
  makeRun(t.db, { scheduleId, scheduledFor: new Date(slot), state, finishedAt: finishedAt ? new Date(finishedAt) : undefined });

describe("lateAfterSecondsFor", () => {
  const base = { enabled: true, cron: null, everySeconds: 300, timezone: "UTC", lateAfterSeconds: null, lateGraceSeconds: null, backlogAfterSeconds: null };
  it("is two intervals plus the default grace, or the overrides", () => {
    const now = new Date("2030-01-01T10:00:00Z");
    expect(lateAfterSecondsFor(base, now)).toBe(630);
    expect(lateAfterSecondsFor({ ...base, lateGraceSeconds: 0 }, now)).toBe(600); // two intervals of a 5-minute job
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
    const ok = await schedule("ok");
    await run(ok, "2030-01-01T09:50:00Z", "done", "2030-01-01T09:50:02Z");
    await run(ok, "2030-01-01T09:55:00Z", "done", "2030-01-01T09:55:03Z");
    await run(ok, "2030-01-01T10:05:00Z", "pending"); // materialised ahead: not yet waiting

    const stuck = await schedule("stuck");
    await run(stuck, "2030-01-01T09:30:00Z", "done", "2030-01-01T09:30:01Z");
    await run(stuck, "2030-01-01T09:35:00Z", "dead", "2030-01-01T09:36:00Z");
    await run(stuck, "2030-01-01T09:40:00Z", "pending");
    await run(stuck, "2030-01-01T09:45:00Z", "pending");

    const paused = await schedule("paused", { enabled: false });
    const health = await getScheduleHealth(t.db, [ok, stuck, paused]);

    expect(health.get(ok)).toMatchObject({ sinceLastSuccessSeconds: 297, deadRuns: 0, oldestPendingAgeSeconds: null, status: "healthy", lateAfterSeconds: 630 });
    expect(health.get(stuck)).toMatchObject({ sinceLastSuccessSeconds: 1799, deadRuns: 1, oldestPendingAgeSeconds: 1200, status: "failing" });
    expect(health.get(paused)).toMatchObject({ sinceLastSuccessSeconds: null, deadRuns: 0, status: "paused" });
  });

  it("calls a schedule late once since-last-success passes its threshold, backlogged on an old pending run", async () => {
    await setClock(t.pool, "2030-01-01T10:00:00Z");
    const late = await schedule("late", { lateAfterSeconds: 600 });
    await run(late, "2030-01-01T09:45:00Z", "done", "2030-01-01T09:45:00Z");
    const slow = await schedule("slow");
    await run(slow, "2030-01-01T09:55:00Z", "done", "2030-01-01T09:59:00Z");
    await run(slow, "2030-01-01T09:50:00Z", "pending");
    const health = await getScheduleHealth(t.db, [late, slow]);
    expect(health.get(late)?.status).toBe("late");
    expect(health.get(slow)).toMatchObject({ status: "backlogged", oldestPendingAgeSeconds: 600, backlogAfterSeconds: 300 });
    expect((await getScheduleHealth(t.db, [])).size).toBe(0);
  });
});
