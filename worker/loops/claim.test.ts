import { describe, expect, it } from "vitest";
import { defineHandler } from "../../lib/handlers/types";
import { createLogger } from "../../lib/log";
import { runClockFrom, setClock } from "../../lib/testing/clock";
import { setupTestDatabase } from "../../lib/testing/db";
import { createHandlerRegistry } from "../handlers/registry";
import { createRunner, type Runner } from "../runner";
import { makeRuns, makeSchedule } from "../../lib/testing/factories";
import { readRun, waitForRun } from "../../lib/testing/runs";
import { startClaimLoop } from "./claim";

const T0 = new Date("2030-01-01T10:00:00Z");
const log = createLogger("test", "silent");

const runner = () =>
  createRunner({
    db: t.db,
    log,
    workerId: "claim-loop",
    registry: createHandlerRegistry([defineHandler({ name: "noop", idempotent: true, description: "", run: () => {} })]),
    concurrency: 10,
    claimBatchSize: 10,
    leaseSafetyMarginMs: 500,
    partitions: () => [0],
  });

const t = setupTestDatabase();

describe("the claim loop", () => {
  it("starts a run at its due instant when that falls between two polls", async () => {
    // A 10 s poll: the pass at start finds the run 600 ms ahead. Polling alone would start it at
    // the next pass, ~9.4 s late; the loop wakes for it instead.
    const s = (await makeSchedule(t.db, { handler: "noop" })).id;
    const [id] = await makeRuns(t.db, s, [{ scheduledFor: T0 }]);
    await runClockFrom(t.pool, new Date(T0.getTime() - 600));
    const loop = startClaimLoop({ runner: runner(), pollIntervalMs: 10_000, log });
    try {
      await waitForRun(t.pool, id, (r) => r.state === "done", 5_000);
      const { rows } = await t.pool.query<{ started_at: Date }>("SELECT started_at FROM runs WHERE id = $1", [id]);
      const started = rows[0].started_at.getTime();
      expect(started).toBeGreaterThanOrEqual(T0.getTime());
      expect(started - T0.getTime()).toBeLessThan(1_000);
    } finally {
      await loop.stop();
    }
  });

  it("under a clock that stands still, wakes early at most once in a row", async () => {
    // Frozen 1 ms before a run: every look says "1 ms", forever. Without the bound that is a pass a millisecond.
    const s = (await makeSchedule(t.db, { handler: "noop" })).id;
    const [id] = await makeRuns(t.db, s, [{ scheduledFor: new Date(T0.getTime() + 1) }]);
    await setClock(t.pool, T0);
    const r = runner();
    let passes = 0;
    const counting: Runner = { ...r, claimPass: () => (passes++, r.claimPass()) };
    const loop = startClaimLoop({ runner: counting, pollIntervalMs: 100, log });
    await new Promise((done) => setTimeout(done, 1_000));
    await loop.stop();
    // Two passes per 100 ms interval at most (one early), with room for timer slack.
    expect(passes).toBeGreaterThanOrEqual(5);
    expect(passes).toBeLessThanOrEqual(24);
    expect((await readRun(t.pool, id)).state).toBe("pending");
  });
});
