import { performance } from "node:perf_hooks";
import { describe, expect, it } from "vitest";
import { defineHandler } from "../../lib/handlers/types";
import { createLogger } from "../../lib/log";
import { runClockFrom, setClock } from "../../lib/testing/clock";
import { setupTestDatabase } from "../../lib/testing/db";
import { createHandlerRegistry } from "../handlers/registry";
import { createRunner, type Runner } from "../runner";
import { makeRuns, makeSchedule } from "../../lib/testing/factories";
import { readRun, waitForRun } from "../../lib/testing/runs";
import { waitUntil } from "../../lib/testing/wait";
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
    // A one-minute poll: the pass at start finds the run 600 ms ahead. Polling alone would start it
    // at the next pass, about a minute late; the loop wakes for it instead. Waited for, then read on
    // the database clock: well under half a poll interval late is the wake, whatever the machine's load.
    const POLL_MS = 60_000;
    const s = (await makeSchedule(t.db, { handler: "noop" })).id;
    const [id] = await makeRuns(t.db, s, [{ scheduledFor: T0 }]);
    await runClockFrom(t.pool, new Date(T0.getTime() - 600));
    const loop = startClaimLoop({ runner: runner(), pollIntervalMs: POLL_MS, log });
    try {
      await waitForRun(t.pool, id, (r) => r.state === "done", POLL_MS / 2);
      const { rows } = await t.pool.query<{ started_at: Date }>("SELECT started_at FROM runs WHERE id = $1", [id]);
      const started = rows[0].started_at.getTime();
      expect(started).toBeGreaterThanOrEqual(T0.getTime());
      expect(started - T0.getTime()).toBeLessThan(POLL_MS / 2);
    } finally {
      await loop.stop();
    }
  });

  it("under a clock that stands still, wakes early at most once in a row", async () => {
    // Frozen 1 ms before a run: every look says "1 ms", forever. Without the bound that is a pass a
    // millisecond. With it, of every two passes one waits a whole poll interval: so twelve passes
    // take at least five intervals of real time. A busy machine only makes them take longer.
    const POLL_MS = 100;
    const PASSES = 12;
    const s = (await makeSchedule(t.db, { handler: "noop" })).id;
    const [id] = await makeRuns(t.db, s, [{ scheduledFor: new Date(T0.getTime() + 1) }]);
    await setClock(t.pool, T0);
    const r = runner();
    let passes = 0;
    let reachedAt = 0;
    const counting: Runner = { ...r, claimPass: () => (++passes === PASSES && (reachedAt = performance.now()), r.claimPass()) };
    const started = performance.now();
    const loop = startClaimLoop({ runner: counting, pollIntervalMs: POLL_MS, log });
    try {
      await waitUntil(() => passes >= PASSES, 30_000, `${PASSES} claim passes`);
    } finally {
      await loop.stop();
    }
    expect(reachedAt - started).toBeGreaterThanOrEqual(((PASSES - 2) / 2) * POLL_MS);
    expect((await readRun(t.pool, id)).state).toBe("pending");
  });
});
