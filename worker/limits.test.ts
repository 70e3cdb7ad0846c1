import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_ACTOR } from "../lib/audit/record";
import { setHandlerLimit } from "../lib/handlers/limits";
import { findQueueMismatches } from "../lib/runs/queue-consistency";
import { setupTestDatabase } from "../lib/testing/db";
import { makeRuns, makeSchedule, RUNS_BY_HAND, slots } from "../lib/testing/factories";
import { startReceiver, type Received } from "../lib/testing/receiver";
import { waitForRun } from "../lib/testing/runs";
import { startWorkers } from "../lib/testing/spawn";
import { listWorkers } from "../lib/workers/queries";

// Queues and concurrency limits with real worker processes claiming at once. The witness is the
// local HTTP receiver each handler calls and that holds its answer for HOLD_MS: a request's
// [arrival, answer] lies inside its run's time as running in the database (claimed before the
// request, finished after the answer), so the most requests the receiver held at once is a floor
// of the most runs that ran at once, measured outside the product.
const T0 = new Date("2030-01-01T10:00:00Z");
const t = setupTestDatabase({ clock: T0 });
const HOLD_MS = 300;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  receiver = await startReceiver(() => 200, { holdMs: HOLD_MS });
});
afterAll(async () => {
  await receiver?.close();
});

type Call = { handler: string; workerId: string; runId: number };

/** The most intervals open at one instant (an end and a start at the same instant do not overlap). */
function maxOverlap(calls: Received[]): number {
  const edges = calls.flatMap((c) => [
    [c.arrivedAt, 1],
    [c.answeredAt!, -1],
  ]);
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let open = 0;
  let most = 0;
  for (const [, d] of edges) most = Math.max(most, (open += d));
  return most;
}

describe("queues and limits on real workers", () => {
  it("three workers never run more than a schedule's maxConcurrent, a handler's fleet-wide limit, or a queue's concurrency on one worker", async () => {
    const due = (n: number) => slots(T0.getTime() - n * 1000, n, 1000).map((d) => ({ scheduledFor: d }));
    const capped = (await makeSchedule(t.db, { ...RUNS_BY_HAND, name: "capped", handler: "alpha", maxConcurrent: 2 })).id;
    const beta1 = (await makeSchedule(t.db, { ...RUNS_BY_HAND, name: "beta-1", handler: "beta" })).id;
    const beta2 = (await makeSchedule(t.db, { ...RUNS_BY_HAND, name: "beta-2", handler: "beta" })).id;
    const reports = (await makeSchedule(t.db, { ...RUNS_BY_HAND, name: "reports", handler: "alpha", queue: "reports" })).id;
    const free = (await makeSchedule(t.db, { ...RUNS_BY_HAND, name: "free", handler: "alpha" })).id;
    await setHandlerLimit(t.db, "beta", 3, SYSTEM_ACTOR);
    const ids: Record<string, number[]> = {
      capped: await makeRuns(t.db, capped, due(10)),
      beta: [...(await makeRuns(t.db, beta1, due(8))), ...(await makeRuns(t.db, beta2, due(8)))],
      reports: await makeRuns(t.db, reports, due(8)),
      free: await makeRuns(t.db, free, due(24)),
    };
    const workers = await startWorkers(t.url, ["qa", "qb", "qc"], {
      SK_TEST_HANDLERS: "alpha,beta",
      SK_TEST_RECEIVER: receiver.url,
      SLOTKEEPER_QUEUES: "default:6,reports:1",
    }, { script: "lib/testing/handler-worker.ts" });
    // The Workers page's source: every worker with its queues and handlers.
    const listed = (await listWorkers(t.db)).filter((w) => workers.some((p) => p.id === w.id));
    expect(listed).toHaveLength(3);
    for (const w of listed) {
      expect(w.queues.map((q) => [q.name, q.concurrency])).toEqual([["default", 6], ["reports", 1]]);
      expect(w.concurrency).toBe(7);
      expect(w.handlers.map((h) => h.name).sort()).toEqual(["alpha", "beta"]);
    }
    for (const group of Object.values(ids)) for (const id of group) await waitForRun(t.pool, id, (r) => r.state === "done", 60_000);

    const runOf = new Map(Object.entries(ids).flatMap(([k, list]) => list.map((id) => [id, k] as const)));
    const calls = receiver.received.filter((r) => runOf.has((r.body as Call).runId));
    const of = (kind: string, worker?: string) => calls.filter((r) => runOf.get((r.body as Call).runId) === kind && (!worker || (r.body as Call).workerId === worker));
    // Every run ran once (no limit made one run twice or not at all).
    expect(calls.map((r) => (r.body as Call).runId).sort((a, b) => a - b)).toEqual([...runOf.keys()].sort((a, b) => a - b));
    expect(maxOverlap(of("capped"))).toBeLessThanOrEqual(2);
    expect(maxOverlap(of("beta"))).toBeLessThanOrEqual(3);
    expect(maxOverlap(of("reports"))).toBeLessThanOrEqual(3);
    for (const w of ["qa", "qb", "qc"]) {
      expect(maxOverlap(of("reports", w))).toBeLessThanOrEqual(1);
      // The default queue on one worker: capped, beta and free together.
      expect(maxOverlap(calls.filter((r) => (r.body as Call).workerId === w && runOf.get((r.body as Call).runId) !== "reports"))).toBeLessThanOrEqual(6);
    }
    // The unlimited schedule did run side by side: the limits above are the claim's doing.
    expect(maxOverlap(of("free"))).toBeGreaterThan(2);
    expect(await findQueueMismatches(t.db)).toMatchObject({ missing: 0, orphaned: 0, duplicated: 0, staleCopies: 0 });
  }, 120_000);
});
