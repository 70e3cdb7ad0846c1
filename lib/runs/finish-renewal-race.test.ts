// A finish that meets a renewal committed after its statement began: the finish locks the queue
// row's newest version (the renewal wrote a new one), and must then change that version, not look
// for it under the statement's older snapshot. Two connections, the renewal held open until the
// finish waits on its lock, then committed. The oracle: the queue row and the record read back.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, createPool } from "../db/client";
import { setupTestDatabase } from "../testing/db";
import { makeRuns, makeSchedule } from "../testing/factories";
import { waitUntil } from "../testing/wait";
import { claimRuns } from "./claim";
import { finishRuns, type RunResult } from "./finish";

const T0 = new Date("2030-03-01T10:00:00Z");
const t = setupTestDatabase({ clock: T0 });
let finisherPool: pg.Pool;
let renewer: pg.Client;

beforeAll(async () => {
  finisherPool = createPool(t.url, { max: 1, applicationName: "slotkeeper:race-finisher" });
  renewer = new pg.Client({ connectionString: t.url });
  await renewer.connect();
});
afterAll(async () => {
  await renewer?.end();
  await finisherPool?.end();
});

/** Finish `result` while a renewal of its queue row is open, committing the renewal once the finish waits for it. */
async function finishAcrossRenewal(runId: number, result: RunResult) {
  await renewer.query("BEGIN");
  await renewer.query(`UPDATE run_queue SET lease_expires_at = lease_expires_at + interval '1 second' WHERE run_id = $1`, [runId]);
  const finishing = finishRuns(createDb(finisherPool), "w1", [result]);
  await waitUntil(
    async () =>
      (await t.pool.query(`SELECT 1 FROM pg_stat_activity WHERE application_name = 'slotkeeper:race-finisher' AND wait_event_type = 'Lock'`)).rowCount === 1,
    10_000,
    "the finish to wait for the renewal's lock",
  );
  await renewer.query("COMMIT");
  return finishing;
}

const queueRow = async (runId: number) => (await t.pool.query(`SELECT state::text, lease_owner FROM run_queue WHERE run_id = $1`, [runId])).rows;
const record = async (runId: number) => (await t.pool.query(`SELECT state::text, attempts FROM runs WHERE id = $1`, [runId])).rows[0];

describe("a finish across a renewal committed meanwhile", () => {
  it("a failure puts the queue row back to pending with the record", async () => {
    const s = (await makeSchedule(t.db, { retryMaxAttempts: 3 })).id;
    const [id] = await makeRuns(t.db, s, [{ scheduledFor: T0 }]);
    const [c] = await claimRuns(t.db, { workerId: "w1", partitions: null, limit: 1 });
    const r = await finishAcrossRenewal(id, { id, scheduleId: s, attempt: c.attempt, outcome: "failed", error: "boom", retryDelaySeconds: 5 });
    expect(r).toEqual({ applied: 1, stale: [] });
    expect(await record(id)).toEqual({ state: "pending", attempts: 1 });
    expect(await queueRow(id)).toEqual([{ state: "pending", lease_owner: null }]);
  });

  it("a success found through the index deletes the queue row with the record done", async () => {
    const s = (await makeSchedule(t.db)).id;
    const [id] = await makeRuns(t.db, s, [{ scheduledFor: T0 }]);
    const [c] = await claimRuns(t.db, { workerId: "w1", partitions: null, limit: 1 });
    // No queueTid: the finish finds the row among its schedule's running runs.
    const r = await finishAcrossRenewal(id, { id, scheduleId: s, attempt: c.attempt, outcome: "succeeded", durationMs: 3 });
    expect(r).toEqual({ applied: 1, stale: [] });
    expect(await record(id)).toEqual({ state: "done", attempts: 1 });
    expect(await queueRow(id)).toEqual([]);
  });
});
