import { describe, expect, it } from "vitest";
import { getRunDetail } from "../lib/runs/history";
import { advanceClock, dbNow, runClockFrom } from "../lib/testing/clock";
import { setupTestDatabase } from "../lib/testing/db";
import { makeRuns, makeSchedule, RUNS_BY_HAND } from "../lib/testing/factories";
import { handlerWorkers } from "../lib/testing/handler-workers";
import { readRun, waitForRun } from "../lib/testing/runs";
import type { WorkerProcess } from "../lib/testing/spawn";
import { waitUntil } from "../lib/testing/wait";
import { WORKER_ALIVE_SECONDS } from "../lib/workers/liveness";

// Two real worker processes serving different handlers (lib/testing/handler-worker.ts: alpha on
// wa, beta on wb), every partition holding runs of both, so half of each worker's runs lie in the
// other's partitions (lib/partitions/sweep.ts). Small claim batches and a long poll interval make
// a cadence of one batch per poll interval outside a worker's own partitions take
// 64 / 10 × 5 s ≈ 32 s here; the bound, LATE_BOUND_S, leaves room for a loaded machine. The witness is the receiver each handler calls, outside the
// product: which process ran which run, and how often.
const T0 = new Date("2030-01-01T10:00:00Z");
const PARTITIONS = 16;
const PER_PARTITION = 8;
const BATCH = 10;
const POLL_MS = 5000;
const LATE_BOUND_S = 12;
const t = setupTestDatabase({ clock: T0 });
const { start, calls } = handlerWorkers(t, { env: { SLOTKEEPER_CLAIM_BATCH: String(BATCH), SLOTKEEPER_POLL_INTERVAL_MS: String(POLL_MS), SLOTKEEPER_PARTITIONS: String(PARTITIONS) } });
const SERVES: Record<string, string> = { wa: "alpha", wb: "beta" };

/** Runs of each handler, PER_PARTITION in every partition, due at `at`. */
async function runsDueAt(at: Date, tag: string): Promise<Record<string, number[]>> {
  const out: Record<string, number[]> = {};
  for (const handler of ["alpha", "beta"]) {
    const s = (await makeSchedule(t.db, { ...RUNS_BY_HAND, name: `split-${tag}-${handler}`, handler })).id;
    const specs = Array.from({ length: PARTITIONS * PER_PARTITION }, (_, i) => ({ scheduledFor: new Date(at.getTime() - i), runAfter: at, partition: i % PARTITIONS }));
    out[handler] = await makeRuns(t.db, s, specs);
  }
  return out;
}

/** Both workers hold partitions and each knows the other's partitions as ones to sweep. */
async function sweeping(ws: WorkerProcess[]) {
  await Promise.all(ws.map((w) => w.waitFor((l) => l.event === "partitions:sweep" && Array.isArray(l.sweep) && l.sweep.length > 0, 30_000)));
}

describe("two handlers served by different workers", () => {
  it("starts every run promptly wherever its partition is held; a killed worker's handler waits unserved (pending, no attempt) and runs once it is back", async () => {
    const wa = await start("wa", "alpha");
    let wb = await start("wb", "beta");
    const shares = async () =>
      (await t.pool.query("SELECT owner, count(*)::int AS n FROM partition_leases WHERE partition < $1 GROUP BY owner ORDER BY owner", [PARTITIONS])).rows;
    await waitUntil(async () => JSON.stringify(await shares()) === JSON.stringify([{ owner: "wa", n: PARTITIONS / 2 }, { owner: "wb", n: PARTITIONS / 2 }]), 30_000, "an even share");
    await sweeping([wa, wb]);
    // One more lease pass (a second) so each worker's sweep list is of the even share.
    await new Promise((r) => setTimeout(r, 1500));

    // The due instant arrives in real time, a second from now.
    const due = new Date(T0.getTime() + 1000);
    const first = await runsDueAt(due, "1");
    await runClockFrom(t.pool, T0);
    for (const id of [...first.alpha, ...first.beta]) await waitForRun(t.pool, id, (r) => r.state === "done", 60_000);

    // Each run ran once, on the worker serving its handler, and all started within LATE_BOUND_S of
    // the due instant, those in the other worker's partitions too.
    const seen = calls();
    for (const c of seen) expect(SERVES[c.workerId]).toBe(c.handler);
    for (const h of ["alpha", "beta"]) expect(seen.filter((c) => c.handler === h).map((c) => c.runId).sort()).toEqual([...first[h]].sort());
    const late = await t.pool.query<{ handler: string; foreign: boolean; max: number; n: number }>(
      `SELECT s.handler, pl.owner <> r.worker_id AS foreign, count(*)::int AS n, max(extract(epoch FROM r.started_at - r.due_at))::float8 AS max
       FROM runs r JOIN schedules s ON s.id = r.schedule_id JOIN partition_leases pl ON pl.partition = r.partition
       WHERE r.id = ANY($1::bigint[]) GROUP BY 1, 2 ORDER BY 1, 2`,
      [[...first.alpha, ...first.beta]],
    );
    // Half of each handler's runs started outside their worker's partitions.
    expect(late.rows.map((r) => [r.handler, r.foreign, r.n])).toEqual([
      ["alpha", false, (PARTITIONS * PER_PARTITION) / 2],
      ["alpha", true, (PARTITIONS * PER_PARTITION) / 2],
      ["beta", false, (PARTITIONS * PER_PARTITION) / 2],
      ["beta", true, (PARTITIONS * PER_PARTITION) / 2],
    ]);
    for (const r of late.rows) expect(r.max, `${r.handler} ${r.foreign ? "in the other's partitions" : "in its own"}`).toBeLessThan(LATE_BOUND_S);

    // kill -9 wb, then let the database clock pass the liveness window: wb no longer counts as live.
    wb.signal("SIGKILL");
    await wb.exited;
    await advanceClock(t.pool, (WORKER_ALIVE_SECONDS + 1) * 1000);
    await waitUntil(async () => (await t.pool.query("SELECT 1 FROM partition_leases WHERE owner = 'wa' AND lease_expires_at > sk_now()")).rowCount === PARTITIONS, 30_000, "wa to hold every partition");
    const second = await runsDueAt(await dbNow(t.pool), "2");
    for (const id of second.alpha) await waitForRun(t.pool, id, (r) => r.state === "done", 60_000);
    // A poll interval more for any stray claim: the beta runs wait, not taken, not dead, and say why.
    await new Promise((r) => setTimeout(r, POLL_MS + 500));
    for (const id of second.beta) expect(await readRun(t.pool, id)).toMatchObject({ state: "pending", attempts: 0 });
    expect(calls().some((c) => second.beta.includes(c.runId))).toBe(false);
    const detail = await getRunDetail(t.db, second.beta[0]);
    expect(detail.unservedHandler).toMatchObject({ handler: "beta" });

    // wb back: the waiting runs run there, first attempt; the unserved mark is gone.
    wb = await start("wb", "beta");
    for (const id of second.beta) expect(await waitForRun(t.pool, id, (r) => r.state === "done", 60_000)).toMatchObject({ attempts: 1 });
    expect(calls().filter((c) => second.beta.includes(c.runId)).map((c) => c.workerId).every((w) => w === "wb")).toBe(true);
    expect(calls().filter((c) => second.beta.includes(c.runId)).length).toBe(second.beta.length);
    expect((await getRunDetail(t.db, second.beta[0])).unservedHandler).toBeNull();

    // No run was claimed by a worker lacking its handler (the attempts record, every attempt), none went dead.
    const wrong = await t.pool.query(
      `SELECT a.run_id, a.worker_id, s.handler FROM run_attempts a JOIN runs r ON r.id = a.run_id JOIN schedules s ON s.id = r.schedule_id
       WHERE NOT ((a.worker_id = 'wa' AND s.handler = 'alpha') OR (a.worker_id = 'wb' AND s.handler = 'beta'))`,
    );
    expect(wrong.rows).toEqual([]);
    expect((await t.pool.query("SELECT count(*)::int AS n FROM runs WHERE state = 'dead'")).rows[0].n).toBe(0);
  }, 240_000);
});
