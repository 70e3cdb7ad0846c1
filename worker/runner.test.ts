import { describe, expect, it } from "vitest";
import { defineHandler } from "../lib/handlers/types";
import { waitFor } from "../lib/handlers/wait";
import { createLogger } from "../lib/log";
import { createWorkerMetrics } from "../lib/metrics/worker-metrics";
import { setupTestDatabase } from "../lib/testing/db";
import { createHandlerRegistry } from "./handlers/registry";
import { createRunner } from "./runner";
import { makeRuns, makeSchedule, slots } from "../lib/testing/factories";
import { readAttempts, readRun } from "../lib/testing/runs";
import { waitUntil } from "../lib/testing/wait";

// The runner in this process on a real database: its one shared deadline timer must still abort
// each attempt at that attempt's own lease deadline (real, monotonic time: this is the worker's
// local deadline, not schedule time), and renewals must keep moving it.
const T0 = new Date("2030-01-01T10:00:00Z");

/** How long the stubborn handler ignores its signal: longer than any wait the runner could make for it. */
const STUBBORN_MS = 8_000;
const seen: { slowSignalAborted?: boolean } = {};
const registry = createHandlerRegistry([
  defineHandler({ name: "noop", idempotent: true, description: "", run: async () => {} }),
  // Ignores its signal: the runner must not wait for it, and must not record its late success.
  defineHandler({
    name: "stubborn",
    idempotent: true,
    description: "",
    run: async (ctx) => {
      await new Promise((r) => setTimeout(r, STUBBORN_MS));
      seen.slowSignalAborted = ctx.signal.aborted;
    },
  }),
  // Ignores its signal for 2 s: past a 1 s timeout, short of the stubborn handler's wait.
  defineHandler({ name: "overstays", idempotent: true, description: "", run: () => new Promise((r) => setTimeout(r, 2_000)) }),
  // Takes longer than its lease but is renewed meanwhile.
  defineHandler({ name: "long", idempotent: true, description: "", run: (ctx) => waitFor(4_500, ctx.signal) }),
]);

function runner(workerId: string, metrics?: ReturnType<typeof createWorkerMetrics>) {
  return createRunner({
    metrics,
    db: t.db,
    log: createLogger("test", "silent"),
    workerId,
    registry,
    concurrency: 10,
    claimBatchSize: 10,
    leaseSafetyMarginMs: 500,
    partitions: () => null,
  });
}

const t = setupTestDatabase({ clock: T0 });

describe("the runner's lease deadlines", () => {
  it("aborts only the attempt past its deadline; the others in the same batch succeed", async () => {
    const quick = (await makeSchedule(t.db, { handler: "noop", leaseSeconds: 2 })).id;
    const slow = (await makeSchedule(t.db, { handler: "stubborn", leaseSeconds: 2 })).id;
    const quickIds = await makeRuns(t.db, quick, slots(T0, 3, -60_000).map((scheduledFor) => ({ scheduledFor })));
    const [slowId] = await makeRuns(t.db, slow, [{ scheduledFor: T0 }]);
    const r = runner("w-deadline");
    const started = performance.now();
    await r.claimPass();
    expect(r.inFlight).toBe(4);
    // Deadline: 2 s lease minus 0.5 s margin, on this process's monotonic clock (no heartbeats are
    // sent). Not before it; and the runner does not wait for the handler that ignores its signal.
    expect(await r.drain(STUBBORN_MS)).toBe(true);
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(1_400);
    expect(seen.slowSignalAborted, "the runner finished before the stubborn handler did").toBeUndefined();

    for (const id of quickIds) expect((await readRun(t.pool, id)).state).toBe("done");
    const slowRun = await readRun(t.pool, slowId);
    expect(slowRun.state).toBe("pending");
    const [attempt] = await readAttempts(t.pool, slowId);
    expect(attempt.outcome).toBe("timed_out");
    expect(attempt.error).toMatch(/lease deadline passed: 2000 ms lease minus 500 ms safety margin/);
    // The handler kept going, but saw its signal aborted when it looked.
    await waitUntil(() => seen.slowSignalAborted !== undefined, 2 * STUBBORN_MS, "the stubborn handler to look at its signal");
    expect(seen.slowSignalAborted).toBe(true);
    expect((await readRun(t.pool, slowId)).state).toBe("pending");
  });

  it("keeps an attempt alive past its first deadline while its lease is renewed", async () => {
    // A 3 s lease: the first deadline is 2.5 s after the claim, and the handler takes 4.5 s.
    const s = (await makeSchedule(t.db, { handler: "long", leaseSeconds: 3 })).id;
    const [id] = await makeRuns(t.db, s, [{ scheduledFor: T0 }]);
    const r = runner("w-renew");
    await r.claimPass();
    const beat = setInterval(() => void r.heartbeatPass(), 200);
    try {
      expect(await r.drain(8_000)).toBe(true);
    } finally {
      clearInterval(beat);
    }
    const run = await readRun(t.pool, id);
    expect(run.state).toBe("done");
    expect(await readAttempts(t.pool, id)).toHaveLength(1);
  });
});

describe("the runner's timeouts", () => {
  it("records a timed-out attempt as lasting at least its schedule's timeoutSeconds, however long the worker took to call the handler", async () => {
    // The worker's own work between taking the run and calling its handler (here its metrics, made
    // slow; in production a GC pause) must not come off the recorded duration: the timeout and the
    // duration count from the same instant. Checked against the schedule's timeout, not the runner.
    const s = (await makeSchedule(t.db, { handler: "overstays", timeoutSeconds: 1 })).id;
    const [id] = await makeRuns(t.db, s, [{ scheduledFor: T0 }]);
    const metrics = createWorkerMetrics();
    const attemptStarted = metrics.attemptStarted.bind(metrics);
    metrics.attemptStarted = (handler) => {
      const until = performance.now() + 50;
      while (performance.now() < until);
      attemptStarted(handler);
    };
    const r = runner("w-timeout", metrics);
    await r.claimPass();
    expect(await r.drain(5_000)).toBe(true);
    const [attempt] = await readAttempts(t.pool, id);
    expect(attempt.outcome).toBe("timed_out");
    expect(attempt.duration_ms).toBeGreaterThanOrEqual(1_000);
  });
});

describe("the runner's backlog signal", () => {
  it("is on after a claim pass that filled its batch and off after one that did not", async () => {
    const s = (await makeSchedule(t.db, { handler: "noop", leaseSeconds: 30 })).id;
    await makeRuns(t.db, s, slots(T0, 12, -60_000).map((scheduledFor) => ({ scheduledFor })));
    const r = runner("w-backlog");
    expect(r.backlogged(60_000)).toBe(false);
    expect(await r.claimPass()).toBe(true); // 10 of 12 due: a full batch
    expect(r.backlogged(60_000)).toBe(true);
    expect(await r.drain(5_000)).toBe(true);
    const fresh = runner("w-backlog-2");
    expect(await fresh.claimPass()).toBe(false); // the last 2: not a backlog
    expect(fresh.backlogged(60_000)).toBe(false);
    expect(await fresh.drain(5_000)).toBe(true);
  });
});
