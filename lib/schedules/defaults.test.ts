import { describe, expect, it } from "vitest";
import { DEFAULT_VALUES, toBody } from "../client/schedule-form-values";
import { setClock } from "../testing/clock";
import { setupTestDatabase } from "../testing/db";
import { parseScheduleInput } from "./input";

// The defaults as the API's contract states them (docs/api.md, "A schedule body"), written out
// here rather than read from SCHEDULE_DEFAULTS, so a change to the one definition fails this test.
const CONTRACT = {
  timezone: "UTC",
  catchUp: "latest",
  maxLatenessSeconds: null,
  jitterSeconds: 0,
  overlap: "allow",
  retry: { maxAttempts: 6, baseSeconds: 30, capSeconds: 900 },
  leaseSeconds: 60,
  enabled: true,
};

const t = setupTestDatabase({ poolSize: 2 });

describe("a schedule's defaults", () => {
  it("are what the API fills in for a body that leaves them out", () => {
    const input = parseScheduleInput({ name: "x", handler: "noop", everySeconds: 60 }, "create");
    expect(input).toMatchObject({ ...CONTRACT, description: "", payload: {}, lateAfterSeconds: null, lateGraceSeconds: null, backlogAfterSeconds: null });
    // A part of the retry policy keeps the other parts' defaults.
    expect(parseScheduleInput({ name: "x", handler: "noop", everySeconds: 60, retry: { maxAttempts: 2 } }, "create").retry).toEqual({ ...CONTRACT.retry, maxAttempts: 2 });
  });

  it("are what the database gives a row that names none of them", async () => {
    const { rows } = await t.pool.query(
      `INSERT INTO schedules (name, handler, every_seconds, next_slot_at, partition) VALUES ('bare', 'noop', 60, now(), 0)
       RETURNING timezone, catch_up, max_lateness_seconds, jitter_seconds, overlap, retry_max_attempts, retry_base_seconds, retry_cap_seconds,
         lease_seconds, enabled, description, payload`,
    );
    expect(rows[0]).toEqual({
      timezone: CONTRACT.timezone,
      catch_up: CONTRACT.catchUp,
      max_lateness_seconds: CONTRACT.maxLatenessSeconds,
      jitter_seconds: CONTRACT.jitterSeconds,
      overlap: CONTRACT.overlap,
      retry_max_attempts: CONTRACT.retry.maxAttempts,
      retry_base_seconds: CONTRACT.retry.baseSeconds,
      retry_cap_seconds: CONTRACT.retry.capSeconds,
      lease_seconds: CONTRACT.leaseSeconds,
      enabled: CONTRACT.enabled,
      description: "",
      payload: {},
    });
  });

  it("date a row that names no times on the database clock, which a moved clock moves", async () => {
    // A schedule without a success is judged late by its age, on sk_now(): a row inserted by hand
    // on a clock years from the wall clock must be created at that clock, not years old.
    const at = "2031-03-04T05:06:07.000Z";
    await setClock(t.pool, at);
    try {
      const { rows } = await t.pool.query<{ created_at: Date; updated_at: Date }>(
        `INSERT INTO schedules (name, handler, every_seconds, next_slot_at, partition) VALUES ('dated', 'noop', 60, $1, 0) RETURNING created_at, updated_at`,
        [at],
      );
      expect(rows[0].created_at.toISOString()).toBe(at);
      expect(rows[0].updated_at.toISOString()).toBe(at);
    } finally {
      await setClock(t.pool, null);
    }
  });

  it("are what the console's new-schedule form starts from", () => {
    const fromForm = parseScheduleInput({ ...toBody({ ...DEFAULT_VALUES, name: "x" }, "create"), cron: undefined, everySeconds: 60 }, "create");
    const fromApi = parseScheduleInput({ name: "x", handler: DEFAULT_VALUES.handler, everySeconds: 60 }, "create");
    expect(fromForm).toEqual(fromApi);
  });
});
