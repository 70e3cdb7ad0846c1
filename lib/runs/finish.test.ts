import { describe, expect, it } from "vitest";
import { SYSTEM_ACTOR } from "../audit/record";
import { dbNow, setClock } from "../testing/clock";
import { setupTestDatabase } from "../testing/db";
import { makeRuns, makeSchedule } from "../testing/factories";
import { readAttempts, readRun } from "../testing/runs";
import { backoffCeilingSeconds, backoffSeconds } from "./backoff";
import { claimRuns, type ClaimedRun } from "./claim";
import { finishRuns, MAX_ERROR_LENGTH } from "./finish";
import { requeueRuns } from "./requeue";

const T0 = new Date("2030-01-01T10:00:00Z");
const claimOne = async (worker = "w1"): Promise<ClaimedRun> => (await claimRuns(t.db, { workerId: worker, partitions: null, limit: 1 }))[0];

const t = setupTestDatabase({ clock: T0 });

describe("finishRuns", () => {
  it("marks a batch done and records one attempt each", async () => {
    const s = (await makeSchedule(t.db)).id;
    const ids = await makeRuns(t.db, s, [{ scheduledFor: T0 }, { scheduledFor: new Date(T0.getTime() - 1000) }]);
    const claimed = await claimRuns(t.db, { workerId: "w1", partitions: null, limit: 10 });
    const r = await finishRuns(t.db, "w1", claimed.map((c) => ({ id: c.id, attempt: c.attempt, outcome: "succeeded", durationMs: 12 })));
    expect(r).toEqual({ applied: 2, stale: [] });
    for (const id of ids) {
      expect(await readRun(t.pool, id)).toMatchObject({ state: "done", lease_owner: null, worker_id: "w1", duration_ms: 12 });
      expect(await readAttempts(t.pool, id)).toMatchObject([{ attempt: 1, worker_id: "w1", outcome: "succeeded", duration_ms: 12 }]);
    }
    // A first-attempt success is stored on the run row alone; run_attempts (read above) adds it back.
    expect((await t.pool.query("SELECT count(*)::int AS n FROM attempts")).rows[0].n).toBe(0);
  });

  it("writes an attempts row for every attempt of a run that took more than one", async () => {
    const s = (await makeSchedule(t.db, { retryMaxAttempts: 3 })).id;
    const [id] = await makeRuns(t.db, s, [{ scheduledFor: T0 }]);
    const first = await claimOne("w1");
    await finishRuns(t.db, "w1", [{ id, attempt: first.attempt, outcome: "failed", error: "boom", retryDelaySeconds: 0 }]);
    const second = await claimOne("w2");
    await finishRuns(t.db, "w2", [{ id, attempt: second.attempt, outcome: "succeeded", durationMs: 5 }]);
    const { rows } = await t.pool.query("SELECT attempt, worker_id, outcome FROM attempts WHERE run_id = $1 ORDER BY attempt", [id]);
    expect(rows).toEqual([
      { attempt: 1, worker_id: "w1", outcome: "failed" },
      { attempt: 2, worker_id: "w2", outcome: "succeeded" },
    ]);
    expect((await readAttempts(t.pool, id)).map((a) => [a.attempt, a.outcome])).toEqual([
      [1, "failed"],
      [2, "succeeded"],
    ]);
  });

  it("changes nothing for a stale token or another worker", async () => {
    const s = (await makeSchedule(t.db)).id;
    const [id] = await makeRuns(t.db, s, [{ scheduledFor: T0 }]);
    const c = await claimOne();
    expect(await finishRuns(t.db, "w1", [{ id, attempt: c.attempt - 1, outcome: "succeeded" }])).toEqual({ applied: 0, stale: [id] });
    expect(await finishRuns(t.db, "w2", [{ id, attempt: c.attempt, outcome: "succeeded" }])).toEqual({ applied: 0, stale: [id] });
    expect((await readRun(t.pool, id)).state).toBe("running");
    expect(await readAttempts(t.pool, id)).toEqual([]);
  });

  it("retries after backoff within the ceiling, then goes dead after max attempts", async () => {
    const s = (await makeSchedule(t.db, { retryMaxAttempts: 3, retryBaseSeconds: 30, retryCapSeconds: 900 })).id;
    const [id] = await makeRuns(t.db, s, [{ scheduledFor: T0 }]);
    for (let attempt = 1; attempt <= 3; attempt++) {
      const c = await claimOne();
      expect(c.attempt).toBe(attempt);
      const delay = backoffSeconds(c.retry, attempt);
      expect(delay).toBeLessThanOrEqual(backoffCeilingSeconds(c.retry, attempt));
      await finishRuns(t.db, "w1", [{ id, attempt, outcome: "failed", error: `boom ${attempt}`, retryDelaySeconds: delay }]);
      const row = await readRun(t.pool, id);
      if (attempt < 3) {
        expect(row.state).toBe("pending");
        expect(row.run_after.getTime() - (await dbNow(t.pool)).getTime()).toBe(Math.round(delay * 1000));
        await setClock(t.pool, row.run_after);
      } else {
        expect(row).toMatchObject({ state: "dead", last_error: "boom 3" });
      }
    }
    expect((await readAttempts(t.pool, id)).map((a) => a.outcome)).toEqual(["failed", "failed", "failed"]);
  });

  it("sends a non-retryable failure dead at once, bounding the stored error", async () => {
    const s = (await makeSchedule(t.db)).id;
    const [id] = await makeRuns(t.db, s, [{ scheduledFor: T0 }]);
    const c = await claimOne();
    await finishRuns(t.db, "w1", [{ id, attempt: c.attempt, outcome: "failed", nonRetryable: true, error: "x".repeat(10_000) }]);
    const row = await readRun(t.pool, id);
    expect(row).toMatchObject({ state: "dead", attempts: 1 });
    expect(row.last_error!.length).toBeLessThanOrEqual(MAX_ERROR_LENGTH);
    expect((await readAttempts(t.pool, id))[0].error!.length).toBeLessThanOrEqual(MAX_ERROR_LENGTH);
  });

  it("releases an aborted run (shutdown) to pending at once without using up its allowance", async () => {
    const s = (await makeSchedule(t.db, { retryMaxAttempts: 1 })).id;
    const [id] = await makeRuns(t.db, s, [{ scheduledFor: T0 }]);
    const c = await claimOne();
    await finishRuns(t.db, "w1", [{ id, attempt: c.attempt, outcome: "aborted", error: "worker shutting down" }]);
    expect(await readRun(t.pool, id)).toMatchObject({ state: "pending", attempts: 1, max_attempts: 2 });
    expect((await claimOne("w2")).attempt).toBe(2);
  });
});

describe("requeueRuns", () => {
  it("puts a dead run back with a fresh allowance, the token still rising, and audits it", async () => {
    const s = (await makeSchedule(t.db, { retryMaxAttempts: 2 })).id;
    const [id, alive] = await makeRuns(t.db, s, [{ scheduledFor: T0 }, { scheduledFor: new Date(T0.getTime() + 3600_000) }]);
    const c = await claimOne();
    await finishRuns(t.db, "w1", [{ id, attempt: c.attempt, outcome: "failed", nonRetryable: true, error: "bad" }]);
    const r = await requeueRuns(t.db, [id, alive, 999], SYSTEM_ACTOR);
    expect(r).toEqual({ requeued: [id], notDead: [alive, 999], missing: [999] });
    expect(await readRun(t.pool, id)).toMatchObject({ state: "pending", attempts: 1, max_attempts: 3 });
    const again = await claimOne();
    expect(again).toMatchObject({ id, attempt: 2 });
    await finishRuns(t.db, "w1", [{ id, attempt: 2, outcome: "succeeded" }]);
    expect((await readRun(t.pool, id)).state).toBe("done");
    const { rows } = await t.pool.query("SELECT action, target_id FROM audit_log");
    expect(rows).toEqual([{ action: "run.requeue", target_id: String(id) }]);
  });
});
