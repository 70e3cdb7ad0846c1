import { describe, expect, it } from "vitest";
import { runClockFrom } from "../lib/testing/clock";
import { setupTestDatabase } from "../lib/testing/db";
import { makeRuns, makeSchedule, RUNS_BY_HAND } from "../lib/testing/factories";
import { readRun, waitForRun } from "../lib/testing/runs";
import { spawnWorker } from "../lib/testing/spawn";
import { waitUntil } from "../lib/testing/wait";

// Two real worker processes over 4 partitions, two each. The holder of two of them has one slot,
// which a long run fills; a run due in its other partition must not wait for that run to end while
// the second worker has room: the second worker claims it there (lib/partitions/sweep.ts). The
// witness is the runs table: which worker started it, and that the long run was still running then.
const T0 = new Date("2030-01-01T10:00:00Z");
const PARTITIONS = 4;
const t = setupTestDatabase({ clock: T0 });
const env = { SLOTKEEPER_PARTITIONS: String(PARTITIONS), SLOTKEEPER_POLL_INTERVAL_MS: "200" };

describe("a partition holder with no free slot", () => {
  it("another worker with room starts the runs due in its partitions, without waiting for one of the holder's runs to end", async () => {
    await runClockFrom(t.pool, T0);
    const full = spawnWorker(t.url, "full", { ...env, SLOTKEEPER_CONCURRENCY: "1" });
    await full.waitFor((l) => l.event === "worker:start", 60_000);
    const roomy = spawnWorker(t.url, "roomy", { ...env, SLOTKEEPER_CONCURRENCY: "5" });
    await roomy.waitFor((l) => l.event === "worker:start", 60_000);
    const held = async (owner: string) =>
      (await t.pool.query<{ partition: number }>("SELECT partition FROM partition_leases WHERE owner = $1 AND partition < $2 ORDER BY partition", [owner, PARTITIONS])).rows.map((r) => r.partition);
    await waitUntil(async () => (await held("full")).length === PARTITIONS / 2 && (await held("roomy")).length === PARTITIONS / 2, 30_000, "an even share");
    const [p1, p2] = await held("full");

    // The holder's one slot: a run of 60 s in its first partition.
    const long = (await makeSchedule(t.db, { ...RUNS_BY_HAND, name: "long", handler: "sleep", payload: { ms: 60_000 }, partition: p1 })).id;
    const [longRun] = await makeRuns(t.db, long, [{ scheduledFor: T0, partition: p1 }]);
    await waitForRun(t.pool, longRun, (r) => r.state === "running" && r.lease_owner === "full", 30_000);

    // Due now in the holder's other partition.
    const quick = (await makeSchedule(t.db, { ...RUNS_BY_HAND, name: "quick", handler: "noop", partition: p2 })).id;
    const { rows } = await t.pool.query<{ now: Date }>("SELECT sk_now() AS now");
    const [quickRun] = await makeRuns(t.db, quick, [{ scheduledFor: rows[0].now, partition: p2 }]);
    const done = await waitForRun(t.pool, quickRun, (r) => r.state === "done", 30_000);
    expect(done.worker_id).toBe("roomy");
    // The holder still held its partition and was still busy with the long run meanwhile.
    expect(await held("full")).toEqual([p1, p2]);
    const stillLong = await readRun(t.pool, longRun);
    expect([stillLong.state, stillLong.lease_owner]).toEqual(["running", "full"]);
    console.log(JSON.stringify({ event: "test:saturated-holder", startedAfterMs: done.started_at!.getTime() - rows[0].now.getTime() }));
  }, 120_000);
});
