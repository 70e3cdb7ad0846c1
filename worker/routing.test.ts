import { describe, expect, it } from "vitest";
import { getRunDetail } from "../lib/runs/history";
import { setupTestDatabase } from "../lib/testing/db";
import { makeRuns, makeSchedule, RUNS_BY_HAND, slots } from "../lib/testing/factories";
import { handlerWorkers } from "../lib/testing/handler-workers";
import { readRun, waitForRun } from "../lib/testing/runs";

// Routing with real worker processes: two workers with different handler sets (custom handlers,
// no built-ins: lib/testing/handler-worker.ts). The witness is the receiver each handler calls,
// outside the product: it records which process ran which run.
const T0 = new Date("2030-01-01T10:00:00Z");
const t = setupTestDatabase({ clock: T0 });
const { start, calls } = handlerWorkers(t);

describe("routing on real workers", () => {
  it("sends every run to a worker serving its handler; an unserved one waits pending, attempts 0, until a worker with it starts", async () => {
    await start("wa", "alpha,shared");
    await start("wb", "beta,shared");
    const byHandler: Record<string, number[]> = {};
    for (const handler of ["alpha", "beta", "shared", "gamma"]) {
      const s = (await makeSchedule(t.db, { ...RUNS_BY_HAND, name: `r-${handler}`, handler })).id;
      byHandler[handler] = await makeRuns(t.db, s, slots(T0.getTime() - 20_000, handler === "gamma" ? 2 : 10, 1000).map((d) => ({ scheduledFor: d })));
    }
    for (const h of ["alpha", "beta", "shared"]) for (const id of byHandler[h]) await waitForRun(t.pool, id, (r) => r.state === "done", 30_000);

    // The witness: each run ran once, on a worker that serves its handler.
    const seen = calls();
    const serves: Record<string, string[]> = { wa: ["alpha", "shared"], wb: ["beta", "shared"] };
    for (const c of seen) expect(serves[c.workerId]).toContain(c.handler);
    for (const h of ["alpha", "beta", "shared"]) expect(seen.filter((c) => c.handler === h).map((c) => c.runId).sort()).toEqual([...byHandler[h]].sort());
    const dead = await t.pool.query("SELECT count(*)::int AS n FROM runs WHERE state = 'dead'");
    expect(dead.rows[0].n).toBe(0);

    // gamma: no live worker has it. It waits, no attempt used, and says why.
    for (const id of byHandler.gamma) expect(await readRun(t.pool, id)).toMatchObject({ state: "pending", attempts: 0 });
    expect(seen.some((c) => c.handler === "gamma")).toBe(false);
    const detail = await getRunDetail(t.db, byHandler.gamma[0]);
    expect(detail.unservedHandler).toEqual({ handler: "gamma", since: detail.runAfter });

    // A worker serving gamma starts: the waiting runs run there, first attempt.
    await start("wg", "gamma");
    for (const id of byHandler.gamma) expect(await waitForRun(t.pool, id, (r) => r.state === "done", 30_000)).toMatchObject({ attempts: 1 });
    expect(calls().filter((c) => c.handler === "gamma").map((c) => [c.runId, c.workerId]).sort()).toEqual(byHandler.gamma.map((id) => [id, "wg"]).sort());
    expect((await getRunDetail(t.db, byHandler.gamma[0])).unservedHandler).toBeNull();
  }, 120_000);
});
