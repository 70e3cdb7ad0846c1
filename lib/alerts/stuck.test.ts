import { describe, expect, it } from "vitest";
import { getScheduleHealth } from "../health/schedule-health";
import { finishRuns } from "../runs/finish";
import { getRunDetail, listRuns } from "../runs/history";
import { heartbeatRuns } from "../runs/lease";
import { STUCK_FLOOR_SECONDS } from "../runs/stuck";
import { toScheduleViewsWithHealth } from "../schedules/queries";
import { setClock } from "../testing/clock";
import { setupTestDatabase } from "../testing/db";
import { makeRun, makeSchedule, RUNS_BY_HAND } from "../testing/factories";
import type { Run } from "../db/schema";
import { evaluateAlerts } from "./evaluate";

// Stuck runs and the stuck alert rule, with the database clock moved (never a sleep): a running
// attempt whose worker keeps renewing its lease is stuck once it passes its schedule's threshold
// (lib/runs/stuck.ts), on the run, on the schedule and as exactly one notification per transition.
const t = setupTestDatabase();
const opts = { publicUrl: "http://console.test", reminderSeconds: 3600 };
const events = async () => (await t.pool.query<{ rule: string; kind: string; details: Record<string, unknown> }>("SELECT rule, kind, details FROM alert_events ORDER BY id")).rows;
const T0 = Date.parse("2030-01-01T10:00:00Z");
const at = (seconds: number) => new Date(T0 + seconds * 1000);
const iso = (seconds: number) => at(seconds).toISOString();

/**
 * Running runs whose worker "w-live" keeps renewing their 60 s leases (the real heartbeat
 * statement): `to(seconds)` moves the clock there in steps of 20 s, renewing every lease at each.
 */
async function heartbeating(scheduleIds: number[], startedSeconds: number) {
  const runs: Run[] = [];
  for (const scheduleId of scheduleIds) runs.push(await makeRun(t.db, { scheduleId, state: "running", startedAt: at(startedSeconds), scheduledFor: at(startedSeconds), leaseOwner: "w-live", leaseExpiresAt: at(startedSeconds + 60) }));
  let now = startedSeconds;
  return {
    ids: runs.map((r) => r.id),
    async to(seconds: number) {
      while (now < seconds) {
        now = Math.min(seconds, now + 20);
        await setClock(t.pool, at(now));
        const held = await heartbeatRuns(t.db, "w-live", runs.map((r) => ({ id: r.id, attempt: 1, scheduleId: r.scheduleId, leaseSeconds: 60 })));
        expect(held.size).toBe(runs.length);
      }
    },
  };
}

/** The oracle's p95: linear interpolation between the closest ranks (as percentile_cont), worked out here. */
function p95(values: number[]): number {
  const v = [...values].sort((a, b) => a - b);
  const pos = 0.95 * (v.length - 1);
  const lo = Math.floor(pos);
  return v[lo] + (pos - lo) * ((v[Math.min(lo + 1, v.length - 1)] ?? v[lo]) - v[lo]);
}

describe("stuck runs", () => {
  it("with a timeout: stuck after timeout + max(timeout, 60 s) of heartbeating, on the run, the schedule and as one stuck notification per transition", async () => {
    await setClock(t.pool, at(0));
    // timeoutSeconds 30: stuck after 30 + max(30, 60) = 90 s.
    const s = await makeSchedule(t.db, { ...RUNS_BY_HAND, enabled: true, name: "stuck-with-timeout", timeoutSeconds: 30 });
    const worker = await heartbeating([s.id], 0);
    const run = { id: worker.ids[0] };

    await worker.to(89);
    expect((await getScheduleHealth(t.db, [s.id])).get(s.id)!.stuckRun).toBeNull();
    expect(await getRunDetail(t.db, run.id)).toMatchObject({ state: "running", stuck: false, stuckSince: null });
    await evaluateAlerts(t.db, opts);
    expect(await events()).toEqual([]);

    await worker.to(91);
    const health = (await getScheduleHealth(t.db, [s.id])).get(s.id)!;
    expect(health.stuckRun).toEqual({ runId: run.id, startedAt: iso(0), since: iso(90), afterSeconds: 90 });
    expect(health.rules.stuck).toBe(true);
    expect(await getRunDetail(t.db, run.id)).toMatchObject({ state: "running", stuck: true, stuckSince: iso(90) });
    expect((await listRuns(t.db, { scheduleIds: [s.id] })).runs.map((r) => [r.id, r.stuck, r.stuckSince])).toEqual([[run.id, true, iso(90)]]);
    const [view] = await toScheduleViewsWithHealth(t.db, [s]);
    expect([view.stuck, view.stuckSince]).toEqual([true, iso(90)]);

    await evaluateAlerts(t.db, opts);
    await worker.to(120);
    await evaluateAlerts(t.db, opts);
    let ev = await events();
    expect(ev.map((e) => [e.rule, e.kind])).toEqual([["stuck", "firing"]]);
    expect(ev[0].details).toMatchObject({ stuckRun: { runId: run.id, since: iso(90), afterSeconds: 90 } });

    // The attempt ends (the worker writes its result): nothing is stuck, the alert resolves once.
    const { applied } = await finishRuns(t.db, "w-live", [{ id: run.id, scheduleId: s.id, attempt: 1, outcome: "succeeded", durationMs: 120_000 }]);
    expect(applied).toBe(1);
    expect(await getRunDetail(t.db, run.id)).toMatchObject({ state: "done", stuck: false, stuckSince: null });
    await evaluateAlerts(t.db, opts);
    await evaluateAlerts(t.db, opts);
    ev = await events();
    expect(ev.map((e) => [e.rule, e.kind])).toEqual([["stuck", "firing"], ["stuck", "resolved"]]);
  });

  it("a run whose lease is no longer renewed is lost, not stuck", async () => {
    await setClock(t.pool, at(0));
    const s = await makeSchedule(t.db, { ...RUNS_BY_HAND, enabled: true, timeoutSeconds: 30 });
    const worker = await heartbeating([s.id], 0);
    const run = { id: worker.ids[0] };
    await worker.to(91);
    expect((await getRunDetail(t.db, run.id)).stuck).toBe(true);
    // No renewal after 91 s: the lease ran out at 151 s.
    await setClock(t.pool, at(152));
    expect((await getRunDetail(t.db, run.id)).stuck).toBe(false);
    expect((await getScheduleHealth(t.db, [s.id])).get(s.id)!.stuckRun).toBeNull();
  });

  it("without a timeout: stuck after max(10 × p95 of the last successes, 600 s), and never while fewer than 3 succeeded", async () => {
    await setClock(t.pool, at(-86_400));
    const durations = [1_000, 2_000, 3_000, 4_000, 100_000];
    const judged = await makeSchedule(t.db, { ...RUNS_BY_HAND, enabled: true, name: "stuck-by-history" });
    const floor = await makeSchedule(t.db, { ...RUNS_BY_HAND, enabled: true, name: "stuck-by-floor" });
    const young = await makeSchedule(t.db, { ...RUNS_BY_HAND, enabled: true, name: "too-few-successes" });
    for (const [i, d] of durations.entries()) {
      await makeRun(t.db, { scheduleId: judged.id, state: "done", scheduledFor: at(-80_000 + i * 60), finishedAt: at(-80_000 + i * 60 + 1), durationMs: d });
      await makeRun(t.db, { scheduleId: floor.id, state: "done", scheduledFor: at(-80_000 + i * 60), finishedAt: at(-80_000 + i * 60 + 1), durationMs: 1_000 });
      if (i < 2) await makeRun(t.db, { scheduleId: young.id, state: "done", scheduledFor: at(-80_000 + i * 60), finishedAt: at(-80_000 + i * 60 + 1), durationMs: 1_000 });
    }
    // A failed run's duration is not a success's: it does not count.
    await makeRun(t.db, { scheduleId: young.id, state: "dead", scheduledFor: at(-70_000), durationMs: 1_000 });
    const after = Math.round(Math.max((10 * p95(durations)) / 1000, STUCK_FLOOR_SECONDS) * 1000) / 1000;
    expect(after).toBe(808);

    await setClock(t.pool, at(0));
    const worker = await heartbeating([judged.id, floor.id, young.id], 0);
    const stuckOf = async () => Object.fromEntries([...(await getScheduleHealth(t.db, [judged.id, floor.id, young.id]))].map(([id, h]) => [id, h.stuckRun?.since ?? null]));
    for (const s of [599, 601, 807, 809, 7_200]) {
      await worker.to(s);
      expect(await stuckOf(), `at ${s} s`).toEqual({
        [judged.id]: s > after ? iso(after) : null,
        [floor.id]: s > STUCK_FLOOR_SECONDS ? iso(STUCK_FLOOR_SECONDS) : null,
        [young.id]: null,
      });
    }
    expect((await getRunDetail(t.db, worker.ids[2])).stuck).toBe(false);
    expect((await getRunDetail(t.db, worker.ids[0])).stuckSince).toBe(iso(after));
  });
});
