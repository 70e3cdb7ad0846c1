import { performance } from "node:perf_hooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_ACTOR } from "../lib/audit/record";
import { setHandlerLimit } from "../lib/handlers/limits";
import { runClockFrom } from "../lib/testing/clock";
import { setupTestDatabase } from "../lib/testing/db";
import { makeRuns, makeSchedule, RUNS_BY_HAND, slots } from "../lib/testing/factories";
import { startReceiver, type Received } from "../lib/testing/receiver";
import { waitForRun } from "../lib/testing/runs";
import { startWorkers, type WorkerProcess } from "../lib/testing/spawn";
import { waitUntil } from "../lib/testing/wait";

// Concurrency limits while workers die and freeze: three real worker processes claim a schedule
// with maxConcurrent 2 and a handler with a fleet-wide limit of 3; one is killed with SIGKILL while
// it holds runs, another is stopped with SIGSTOP while it holds runs until one of them has been
// taken over, then continued.
//
// What the docs promise (docs/schedules.md, "Queues and concurrency limits"): the limits hold
// across the fleet, and "a run whose lease expired still counts until the rescue settles it", so a
// dead or frozen worker's runs are not doubled by the limit's arithmetic. The one thing the
// scheduler cannot stop is a superseded attempt's handler, started before its worker froze, acting
// after its lease ran out (the worker aborts its signal at the lease minus the safety margin and
// starts no handler past it, docs/handlers.md "How long a handler may take"; this test's handler
// ignores the signal). So, checked exactly:
//   - the receiver (outside the product): the calls in flight at once never exceed the limit,
//     counting every call except those of the frozen worker's superseded attempts that arrived
//     after it was continued;
//   - the attempts table: the attempts of a group open at once (started → finished, a lost one
//     until its lease ran out) never exceed the limit;
//   - every run is done, with exactly one succeeded attempt, and was called at least once.
const LEASE_SECONDS = 5;
const HOLD_MS = 800;
/**
 * How much earlier than the commit it waited for a limited claim may be stamped: its transaction
 * (two statements, exclusive.ts) is stamped when the first begins, and on a loaded 2-core machine
 * the second, whose snapshot sees the finish, may begin hundreds of milliseconds later. Half of
 * HOLD_MS, so an attempt started beside others in the first half of their calls still counts; the
 * receiver's count, the oracle outside the database, has no slack at all.
 */
const TX_SLACK_MS = 400;
const T0 = new Date("2030-01-01T10:00:00Z");
const t = setupTestDatabase();
let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  receiver = await startReceiver(() => 200, { holdMs: HOLD_MS });
});
afterAll(async () => {
  await receiver?.close();
});

type Call = { handler: string; workerId: string; runId: number; attempt: number };
const call = (r: Received) => r.body as Call;

/** The most intervals open at one instant (an end and a start at the same instant do not overlap). */
function maxOverlap(intervals: [number, number][]): number {
  const edges = intervals.flatMap(([a, b]) => [[a, 1], [b, -1]] as [number, number][]);
  edges.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  let open = 0;
  let most = 0;
  for (const [, d] of edges) most = Math.max(most, (open += d));
  return most;
}

/**
 * Wait until the receiver holds a call (arrived, not yet answered) of one of `ws`: that worker is in
 * the middle of a run. Which worker claims first is the claim's business, not the test's, so the
 * victim is whichever is busy.
 */
async function inFlight(ws: WorkerProcess[]): Promise<{ w: WorkerProcess; call: Call }> {
  let found: Call | undefined;
  await waitUntil(() => {
    found = receiver.received.map((r) => (r.answeredAt === undefined && ws.some((w) => w.id === call(r).workerId) ? call(r) : undefined)).find(Boolean);
    return found !== undefined;
  }, 30_000, `a call of ${ws.map((w) => w.id).join(" or ")} in flight`, 10);
  return { w: ws.find((w) => w.id === found!.workerId)!, call: found! };
}

describe("limits with workers killed and frozen", () => {
  it("kill -9 and SIGSTOP past the lease never let more than maxConcurrent or the handler's limit run at once, and every run finishes once", async () => {
    // The database clock runs (from T0): leases run out as the workers stop renewing them.
    await runClockFrom(t.pool, T0);
    const due = (n: number) => slots(T0.getTime() - n * 1000, n, 1000).map((d) => ({ scheduledFor: d }));
    const capped = (await makeSchedule(t.db, { ...RUNS_BY_HAND, name: "capped", handler: "alpha", maxConcurrent: 2, leaseSeconds: LEASE_SECONDS })).id;
    const beta1 = (await makeSchedule(t.db, { ...RUNS_BY_HAND, name: "beta-1", handler: "beta", leaseSeconds: LEASE_SECONDS })).id;
    const beta2 = (await makeSchedule(t.db, { ...RUNS_BY_HAND, name: "beta-2", handler: "beta", leaseSeconds: LEASE_SECONDS })).id;
    await setHandlerLimit(t.db, "beta", 3, SYSTEM_ACTOR);
    const limit: Record<string, number> = { capped: 2, beta: 3 };
    const ids: Record<string, number[]> = {
      capped: await makeRuns(t.db, capped, due(30)),
      beta: [...(await makeRuns(t.db, beta1, due(20))), ...(await makeRuns(t.db, beta2, due(20)))],
    };
    const groupOf = new Map(Object.entries(ids).flatMap(([k, list]) => list.map((id) => [id, k] as const)));
    const workers = await startWorkers(t.url, ["fk-1", "fk-2", "fk-3"], {
      SK_TEST_HANDLERS: "alpha,beta",
      SK_TEST_RECEIVER: receiver.url,
      SLOTKEEPER_QUEUES: "default:4",
    }, { script: "lib/testing/handler-worker.ts" });

    // kill -9 in the middle of a run: its runs keep counting until their leases run out and the rescue takes them.
    const { w: killed, call: killedCall } = await inFlight(workers);
    killed.signal("SIGKILL");
    await killed.exited;
    // SIGSTOP in the middle of a run, kept stopped until that run has been taken over by another worker.
    const { w: frozen, call: frozenCall } = await inFlight(workers.filter((w) => w !== killed));
    const steady = workers.find((w) => w !== killed && w !== frozen)!;
    frozen.signal("SIGSTOP");
    await waitUntil(async () => {
      const r = await t.pool.query("SELECT 1 FROM run_attempts WHERE run_id = $1 AND attempt = $2 AND outcome = 'lease_expired'", [frozenCall.runId, frozenCall.attempt]);
      return r.rowCount === 1;
    }, 60_000, "the frozen worker's run taken over", 100);
    const continuedAt = performance.now();
    frozen.signal("SIGCONT");

    for (const id of groupOf.keys()) await waitForRun(t.pool, id, (r) => r.state === "done", 90_000);

    const attempts = (await t.pool.query<{ run_id: string; attempt: number; worker_id: string; outcome: string; started_at: Date; finished_at: Date }>(
      "SELECT run_id, attempt, worker_id, outcome, started_at, finished_at FROM run_attempts WHERE run_id = ANY($1::bigint[]) ORDER BY run_id, attempt",
      [[...groupOf.keys()]],
    )).rows.map((a) => ({ ...a, runId: Number(a.run_id) }));
    const outcome = new Map(attempts.map((a) => [`${a.runId}:${a.attempt}`, a.outcome]));
    // The faults happened where they were meant to: both workers lost the attempt they were in.
    expect(outcome.get(`${killedCall.runId}:${killedCall.attempt}`)).toBe("lease_expired");
    expect(outcome.get(`${frozenCall.runId}:${frozenCall.attempt}`)).toBe("lease_expired");

    // Every run finished once: done, one succeeded attempt, and the receiver saw it called.
    const calls = receiver.received.filter((r) => groupOf.has(call(r).runId));
    for (const id of groupOf.keys()) {
      expect(attempts.filter((a) => a.runId === id && a.outcome === "succeeded"), `run ${id}`).toHaveLength(1);
      expect(calls.some((r) => call(r).runId === id), `run ${id} called`).toBe(true);
    }
    // No attempt called twice.
    const keys = calls.map((r) => `${call(r).runId}:${call(r).attempt}`);
    expect(new Set(keys).size).toBe(keys.length);

    // The documented exception: calls of the frozen worker's superseded attempts made after it was continued.
    const zombie = (r: Received) => call(r).workerId === frozen.id && r.arrivedAt >= continuedAt && outcome.get(`${call(r).runId}:${call(r).attempt}`) === "lease_expired";
    const report: Record<string, unknown> = { zombieCalls: calls.filter(zombie).length, lostAttempts: attempts.filter((a) => a.outcome === "lease_expired").length };
    for (const [group, k] of Object.entries(limit)) {
      const ofGroup = calls.filter((r) => groupOf.get(call(r).runId) === group);
      const effects = maxOverlap(ofGroup.filter((r) => !zombie(r)).map((r) => [r.arrivedAt, r.answeredAt!]));
      // An attempt's stamps are its transactions' starts (sk_now() reads now()), so a start counts
      // from TX_SLACK_MS after its stamp (above); the receiver's check has no such slack.
      const held = maxOverlap(attempts.filter((a) => groupOf.get(a.runId) === group).map((a) => [a.started_at.getTime() + TX_SLACK_MS, a.finished_at.getTime()]));
      report[group] = { limit: k, mostCallsAtOnce: effects, mostAttemptsAtOnce: held, withZombies: maxOverlap(ofGroup.map((r) => [r.arrivedAt, r.answeredAt!])) };
      const detail = JSON.stringify({ calls: ofGroup.map((r) => [call(r).workerId, call(r).runId, call(r).attempt, Math.round(r.arrivedAt), Math.round(r.answeredAt!)]), attempts: attempts.filter((a) => groupOf.get(a.runId) === group).map((a) => [a.worker_id, a.runId, a.attempt, a.outcome, a.started_at.toISOString(), a.finished_at.toISOString()]) });
      expect(effects, `${group}: calls at once ${detail}`).toBeLessThanOrEqual(k);
      expect(held, `${group}: attempts at once ${detail}`).toBeLessThanOrEqual(k);
      // The limit was reached, so it is the claim that held the line, not a lack of work.
      expect(effects, group).toBe(k);
    }
    console.log(JSON.stringify({ event: "test:limits-faults", ...report }));
    await steady.waitFor((l) => l.event === "run:attempt", 1);
  }, 180_000);
});
