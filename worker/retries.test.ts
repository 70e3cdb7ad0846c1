import { beforeEach, describe, expect, it } from "vitest";
import { SYSTEM_ACTOR } from "../lib/audit/record";
import { backoffCeilingSeconds } from "../lib/runs/backoff";
import { requeueRuns } from "../lib/runs/requeue";
import { dbNow, setClock } from "../lib/testing/clock";
import { setupTestDatabase } from "../lib/testing/db";
import { makeRuns, makeSchedule, RUNS_BY_HAND } from "../lib/testing/factories";
import { readAttempts, readRun, waitForRun } from "../lib/testing/runs";
import { startWorkers } from "../lib/testing/spawn";

// Real retries by a real worker process. The database clock is frozen and moved forward to make
// each retry due: no test sleeps to move schedule time.
const T0 = new Date("2030-01-01T10:00:00Z");
const t = setupTestDatabase({ clock: T0 });
beforeEach(async () => {
  await startWorkers(t.url, ["retrier"]);
});

const waitForRow = (id: number, pred: Parameters<typeof waitForRun>[2], timeoutMs?: number) => waitForRun(t.pool, id, pred, timeoutMs);

describe("retries on a real worker", () => {
  it("waits within the backoff ceilings (30, 60, 120 s), goes dead after max attempts, and a re-queue finishes it", async () => {
    const policy = { maxAttempts: 4, baseSeconds: 30, capSeconds: 900 };
    const s = (await makeSchedule(t.db, { ...RUNS_BY_HAND, handler: "fail", payload: { message: "upstream said no" }, retryMaxAttempts: 4, retryBaseSeconds: 30, retryCapSeconds: 900 })).id;
    const [id] = await makeRuns(t.db, s, [{ scheduledFor: T0 }]);
    // A run that is due is claimed on the worker's next pass: once a canary inserted after the retry
    // was scheduled is done, the worker has passed over the retry since, and left it alone.
    const canary = (await makeSchedule(t.db, { ...RUNS_BY_HAND, handler: "noop" })).id;
    for (let attempt = 1; attempt < 4; attempt++) {
      const row = await waitForRow(id, (r) => r.state === "pending" && r.attempts === attempt);
      const waitSeconds = (row.run_after.getTime() - (await dbNow(t.pool)).getTime()) / 1000;
      expect(waitSeconds).toBeGreaterThanOrEqual(0);
      expect(waitSeconds).toBeLessThanOrEqual(backoffCeilingSeconds(policy, attempt));
      expect(row.last_error).toBe("upstream said no");
      // Not due yet: the worker leaves it alone until the database clock says so.
      const [passed] = await makeRuns(t.db, canary, [{ scheduledFor: new Date(T0.getTime() - attempt * 1000) }]);
      await waitForRow(passed, (r) => r.state === "done");
      expect(await readRun(t.pool, id)).toMatchObject({ state: "pending", attempts: attempt });
      await setClock(t.pool, row.run_after);
    }
    const dead = await waitForRow(id, (r) => r.state === "dead");
    expect(dead.attempts).toBe(4);
    const attempts = await readAttempts(t.pool, id);
    expect(attempts.map((a) => [a.attempt, a.worker_id, a.outcome, a.error])).toEqual(
      [1, 2, 3, 4].map((n) => [n, "retrier", "failed", "upstream said no"]),
    );

    // The operator fixes the cause and re-queues: a fresh allowance, the token still rising.
    await t.pool.query("UPDATE schedules SET handler = 'noop' WHERE id = $1", [s]);
    expect((await requeueRuns(t.db, [id], SYSTEM_ACTOR)).requeued).toEqual([id]);
    const done = await waitForRow(id, (r) => r.state === "done");
    expect(done).toMatchObject({ attempts: 5, max_attempts: 8, last_error: null });
    expect((await readAttempts(t.pool, id)).at(-1)).toMatchObject({ attempt: 5, outcome: "succeeded" });
  }, 120_000);

  it("a non-retryable error goes dead at attempt 1", async () => {
    const s = (await makeSchedule(t.db, { ...RUNS_BY_HAND, handler: "fail", payload: { nonRetryable: true, message: "bad input" } })).id;
    const [id] = await makeRuns(t.db, s, [{ scheduledFor: T0 }]);
    const dead = await waitForRow(id, (r) => r.state === "dead");
    expect(dead).toMatchObject({ attempts: 1, last_error: "NonRetryableError: bad input" });
  }, 120_000);

  it("a run whose handler no worker serves is not claimed: it waits pending, no attempt used, and the worker goes on", async () => {
    const s = (await makeSchedule(t.db, { ...RUNS_BY_HAND, handler: "no-such-handler" })).id;
    const [id] = await makeRuns(t.db, s, [{ scheduledFor: T0 }]);
    // A run of a served handler queued after it is done: the worker has passed over the other since.
    const s2 = (await makeSchedule(t.db, { ...RUNS_BY_HAND, handler: "noop" })).id;
    const [ok] = await makeRuns(t.db, s2, [{ scheduledFor: T0 }]);
    await waitForRow(ok, (r) => r.state === "done");
    expect(await readRun(t.pool, id)).toMatchObject({ state: "pending", attempts: 0, last_error: null });
  }, 120_000);
});
