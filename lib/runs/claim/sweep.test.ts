import { describe, expect, it } from "vitest";
import { setupTestDatabase } from "../../testing/db";
import { makeRuns, makeSchedule, RUNS_BY_HAND } from "../../testing/factories";
import { claimRunsDetailed, sweptHandlers } from "./index";

// The claim in sweep partitions (lib/partitions/sweep.ts): after its own partitions, a worker takes
// there exactly what the holder lacks of what it serves. The oracle is the runs written below, by
// handler, queue and partition.
const T0 = new Date("2030-01-01T10:00:00Z");
const t = setupTestDatabase({ clock: T0 });

async function runs(handler: string, queue: string, partition: number, n: number): Promise<number[]> {
  const s = await makeSchedule(t.db, { ...RUNS_BY_HAND, name: `sw-${handler}-${queue}-${partition}`, handler, queue });
  return makeRuns(t.db, s.id, Array.from({ length: n }, (_, i) => ({ scheduledFor: new Date(T0.getTime() - 1000 - i), partition })));
}
const ids = (r: { claimed: { id: number }[] }) => r.claimed.map((c) => c.id).sort((a, b) => a - b);
const sorted = (...xs: number[][]) => xs.flat().sort((a, b) => a - b);

describe("the sweep claim", () => {
  it("takes, in a sweep partition, only the handlers its holder lacks; in a queue the holder lacks, every handler it serves", async () => {
    const ownAlpha = await runs("alpha", "default", 0, 2);
    const sweepAlpha = await runs("alpha", "default", 1, 3);
    const sweepShared = await runs("shared", "default", 1, 2);
    const sweepSharedReports = await runs("shared", "reports", 1, 2);
    const sweepBeta = await runs("beta", "default", 1, 2);
    const unswept = await runs("alpha", "default", 2, 2);
    const r = await claimRunsDetailed(t.db, {
      workerId: "w",
      partitions: [0],
      limit: 100,
      handlers: ["alpha", "shared"],
      queues: { default: 50, reports: 50 },
      // The holder of 1 serves shared and beta in default only; 2 is held by one that serves all.
      sweep: [{ partition: 1, handlers: ["alpha"], queues: ["reports"] }],
      rescueExpired: false,
    });
    expect(ids(r)).toEqual(sorted(ownAlpha, sweepAlpha, sweepSharedReports));
    for (const id of [...sweepShared, ...sweepBeta, ...unswept]) expect(r.claimed.some((c) => c.id === id)).toBe(false);
  });

  it("never names a handler the worker does not serve", () => {
    expect(sweptHandlers({ partition: 1, handlers: ["alpha", "gamma"], queues: [] }, ["alpha"], "default")).toEqual(["alpha"]);
    expect(sweptHandlers({ partition: 1, handlers: [], queues: ["reports"] }, ["alpha", "beta"], "reports")).toEqual(["alpha", "beta"]);
    expect(sweptHandlers({ partition: 1, handlers: [], queues: ["reports"] }, ["alpha", "beta"], "default")).toEqual([]);
    expect(sweptHandlers({ partition: 1, handlers: ["alpha"], queues: ["reports"] }, null, "reports")).toBeNull();
    expect(sweptHandlers({ partition: 1, handlers: ["alpha"], queues: [] }, null, undefined)).toEqual(["alpha"]);
  });
});
