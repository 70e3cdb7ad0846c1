import { describe, expect, it } from "vitest";
import { setupTestDatabase } from "../../testing/db";
import { makeRun, makeSchedule } from "../../testing/factories";
import { readAttempts, readRun } from "../../testing/runs";
import { RESCUE_LIMIT_DEFAULT, rescueExpiredRuns, rescueGateMs, validateRescueConfig } from "./rescue";

const T0 = new Date("2030-01-01T10:00:00Z");
const t = setupTestDatabase({ clock: T0 });
const ago = (s: number) => new Date(T0.getTime() - s * 1000);

describe("the rescue's config", () => {
  it("fills in the named defaults and refuses a bad value naming the field", () => {
    expect(validateRescueConfig({ workerId: "w" })).toEqual({ workerId: "w", limit: RESCUE_LIMIT_DEFAULT, gateMs: undefined, handlers: null, queues: null });
    expect(() => validateRescueConfig({ workerId: "w", limit: 0 })).toThrow(/RescueConfig\.limit/);
    expect(() => validateRescueConfig({ workerId: "w", limit: 1.5 })).toThrow(/RescueConfig\.limit/);
    expect(() => validateRescueConfig({ workerId: "w", gateMs: 0 })).toThrow(/RescueConfig\.gateMs/);
    expect(() => validateRescueConfig({ workerId: "" })).toThrow(/RescueConfig\.workerId/);
    expect(rescueGateMs(1000)).toBe(900);
    expect(rescueGateMs(undefined)).toBeUndefined();
  });
});

describe("one rescue pass", () => {
  it("takes over expired leases, sends a final attempt dead, records each lost attempt and says how many", async () => {
    const s = await makeSchedule(t.db, { leaseSeconds: 30, retryMaxAttempts: 3 });
    const last = await makeSchedule(t.db, { leaseSeconds: 30, retryMaxAttempts: 1 });
    const expired = await makeRun(t.db, { scheduleId: s.id, scheduledFor: ago(120), state: "running", attempts: 1, leaseOwner: "gone", leaseExpiresAt: ago(1) });
    const final = await makeRun(t.db, { scheduleId: last.id, scheduledFor: ago(120), state: "running", attempts: 1, leaseOwner: "gone", leaseExpiresAt: ago(1) });
    const live = await makeRun(t.db, { scheduleId: s.id, scheduledFor: ago(60), state: "running", attempts: 1, leaseOwner: "alive", leaseExpiresAt: new Date(T0.getTime() + 10_000) });

    const pass = await rescueExpiredRuns(t.db, { workerId: "rescuer" });
    expect({ rescued: pass.rescued, dead: pass.dead }).toEqual({ rescued: 1, dead: 1 });
    expect(pass.claimed.map((r) => [r.id, r.attempt])).toEqual([[expired.id, 2]]);
    expect(pass.settled).toEqual([{ id: final.id, state: "dead" }]);

    const rescued = await readRun(t.pool, expired.id);
    expect(rescued).toMatchObject({ state: "running", attempts: 2, lease_owner: "rescuer" });
    expect(rescued.lease_expires_at).toEqual(new Date(T0.getTime() + 30_000));
    expect(await readRun(t.pool, final.id)).toMatchObject({ state: "dead", attempts: 1, last_error: "lease expired on final attempt" });
    expect(await readRun(t.pool, live.id)).toMatchObject({ state: "running", attempts: 1, lease_owner: "alive" });
    for (const id of [expired.id, final.id]) {
      expect(await readAttempts(t.pool, id)).toMatchObject([{ attempt: 1, worker_id: "gone", outcome: "lease_expired" }]);
    }

    // Nothing left to rescue: the next pass finds nothing.
    expect(await rescueExpiredRuns(t.db, { workerId: "rescuer" })).toMatchObject({ rescued: 0, dead: 0 });
  });
});
