// The stated worst-case lateness holds when a worker dies or freezes: real worker processes, real
// kill -9 and SIGSTOP, the database clock running (time passes for real here, because how late
// runs start IS the measurement). Every slot's first attempt must start within the bound the API
// states for its schedule (worstCaseLatenessSeconds, the function the API calls), long before the
// dead worker's 15 s partition lease would hand its partitions over.
import { describe, expect, it } from "vitest";
import { worstCaseLatenessSeconds } from "../lib/schedules/lateness";
import { runClockFrom } from "../lib/testing/clock";
import { setupTestDatabase } from "../lib/testing/db";
import { startWorkers, type WorkerProcess } from "../lib/testing/spawn";
import { waitUntil } from "../lib/testing/wait";

const POLL_MS = 200;
const LEASE_SECONDS = 5;
const EVERY_SECONDS = 2;
const PARTITION_LEASE_SECONDS = 15;
const T0 = new Date("2030-01-01T10:00:00Z");
const ENV = { SLOTKEEPER_POLL_INTERVAL_MS: String(POLL_MS), SLOTKEEPER_PARTITION_LEASE_SECONDS: String(PARTITION_LEASE_SECONDS), SLOTKEEPER_OUTBOUND_ALLOW: "127.0.0.1,::1,localhost" };
const STATED = worstCaseLatenessSeconds({ jitterSeconds: 0, leaseSeconds: LEASE_SECONDS }, POLL_MS);

const t = setupTestDatabase();

const dbNowMs = async () => (await t.pool.query<{ now: Date }>("SELECT sk_now() AS now")).rows[0].now.getTime();

/** One schedule per partition, every 2 s from the next slot on, catch-up all (no slot is skipped). */
async function schedulesInEveryPartition(extra: { handler?: string; payload?: unknown; partitions?: number[] } = {}): Promise<{ ids: number[]; from: number }> {
  const first = Math.ceil((await dbNowMs()) / (EVERY_SECONDS * 1000) + 1) * EVERY_SECONDS * 1000;
  const { rows } = await t.pool.query<{ id: string }>(
    `INSERT INTO schedules (name, handler, payload, every_seconds, lease_seconds, catch_up, next_slot_at, partition)
     SELECT 'bound-' || p || '-' || md5(random()::text), $1, $2::jsonb, $3, $4, 'all', $5, p FROM unnest($6::int[]) AS p
     RETURNING id`,
    [extra.handler ?? "noop", JSON.stringify(extra.payload ?? {}), EVERY_SECONDS, LEASE_SECONDS, new Date(first), extra.partitions ?? Array.from({ length: 16 }, (_, i) => i)],
  );
  return { ids: rows.map((r) => Number(r.id)), from: first };
}

async function heldBy(workerId: string): Promise<number[]> {
  const { rows } = await t.pool.query<{ partition: number }>(
    `SELECT partition FROM partition_leases WHERE owner = $1 AND lease_expires_at > sk_now() ORDER BY partition`,
    [workerId],
  );
  return rows.map((r) => r.partition);
}

async function twoWorkers(): Promise<[WorkerProcess, WorkerProcess]> {
  const [a, b] = await startWorkers(t.url, ["victim", "survivor"], ENV);
  await waitUntil(async () => (await heldBy("victim")).length === 8 && (await heldBy("survivor")).length === 8, 30_000, "an even split of the partitions");
  return [a, b];
}

type FirstStart = { schedule_id: string; partition: number; scheduled_for: Date; state: string; started_at: Date | null; worker_id: string | null };

/** Every run of these schedules with its slot in [from, to], with its first attempt (worker and start). */
async function firstStarts(ids: number[], from: number, to: number): Promise<FirstStart[]> {
  const { rows } = await t.pool.query<FirstStart>(
    `SELECT r.schedule_id, r.partition, r.scheduled_for, s.state, a.started_at, a.worker_id
     FROM runs r
     JOIN run_status s ON s.id = r.id
     LEFT JOIN run_attempts a ON a.run_id = r.id AND a.attempt = 1
     WHERE r.schedule_id = ANY($1::bigint[]) AND r.scheduled_for BETWEEN $2 AND $3
     ORDER BY r.scheduled_for, r.schedule_id`,
    [ids, new Date(from), new Date(to)],
  );
  return rows;
}

/** Wait until every run of these schedules with its slot in [from, to] is done. */
async function waitAllDone(ids: number[], from: number, to: number) {
  await waitUntil(
    async () => {
      const { rows } = await t.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM run_status WHERE schedule_id = ANY($1::bigint[]) AND scheduled_for BETWEEN $2 AND $3 AND state <> 'done'`,
        [ids, new Date(from), new Date(to)],
      );
      return rows[0].n === 0;
    },
    60_000,
    "every run in the window to be done",
  );
}

/** Check every slot in [from, to] of every schedule ran once and its first attempt started within the stated bound. */
function checkBound(rows: FirstStart[], ids: number[], from: number, to: number) {
  const slotMs = EVERY_SECONDS * 1000;
  const slots = (Math.floor(to / slotMs) - Math.ceil(from / slotMs) + 1) * ids.length;
  expect(rows).toHaveLength(slots);
  const late = rows.map((r) => ({ ...r, lateMs: r.started_at!.getTime() - r.scheduled_for.getTime() }));
  const over = late.filter((r) => r.lateMs > STATED * 1000);
  expect(over.map((r) => `${r.scheduled_for.toISOString()} schedule ${r.schedule_id} (partition ${r.partition}) started ${r.lateMs} ms late by ${r.worker_id}`)).toEqual([]);
  return late;
}

describe("the stated worst-case lateness when a worker fails", () => {
  it(`kill -9: every slot's first attempt starts within the stated ${STATED} s, the dead worker's partitions included`, async () => {
    await runClockFrom(t.pool, T0);
    const [victim] = await twoWorkers();
    const { ids, from } = await schedulesInEveryPartition();
    const victimParts = await heldBy("victim");
    // Let both work for a few slots, then kill the holder of half the partitions.
    await waitUntil(async () => (await dbNowMs()) > from + 4_000, 20_000, "a few slots to run");
    const killedAt = await dbNowMs();
    victim.signal("SIGKILL");
    await victim.exited;
    // A schedule created after the death in one of its partitions: someone must tick it too.
    const { ids: late, from: lateFrom } = await schedulesInEveryPartition({ partitions: [victimParts[0]] });
    // Watch until just before its partition lease would have let the survivor take the partitions over.
    const to = killedAt + (PARTITION_LEASE_SECONDS - 2) * 1000;
    await waitUntil(async () => (await dbNowMs()) > to + STATED * 1000, 60_000, "the window after the kill");
    await waitAllDone([...ids, ...late], from, to);
    const rows = checkBound(await firstStarts(ids, from, to), ids, from, to);
    checkBound(await firstStarts(late, lateFrom, to), late, lateFrom, to);
    // The fault mattered: slots in the dead worker's partitions after the kill were started by the
    // survivor, before the partition lease ran out.
    const takenOver = rows.filter((r) => victimParts.includes(r.partition) && r.scheduled_for.getTime() > killedAt);
    expect(takenOver.length).toBeGreaterThan(10);
    expect(takenOver.filter((r) => r.worker_id !== "survivor").map((r) => `${r.scheduled_for.toISOString()} p${r.partition} by ${r.worker_id}`)).toEqual([]);
    const worst = Math.max(...rows.map((r) => r.lateMs));
    console.log(JSON.stringify({ event: "test:bound:kill9", statedSeconds: STATED, worstLateMs: worst, takenOver: takenOver.length, runs: rows.length }));
  }, 180_000);

  it(`SIGSTOP past the lease: every slot starts within the stated ${STATED} s, and the frozen worker commits nothing after it wakes`, async () => {
    await runClockFrom(t.pool, new Date(T0.getTime() + 86_400_000));
    const [frozen, survivor] = await twoWorkers();
    const { ids, from } = await schedulesInEveryPartition();
    const frozenParts = await heldBy("victim");
    // A slow ledger write in a partition of the worker about to freeze: it is frozen mid-handler,
    // its lease runs out, the survivor runs the slot again, and the zombie's write must not count.
    const {
      ids: [ledger],
      from: ledgerFrom,
    } = await schedulesInEveryPartition({ handler: "sql-ledger", payload: { delayMs: 1500, interruptible: false }, partitions: [frozenParts[0]] });
    await frozen.waitFor((l) => l.event === "run:attempt" && l.scheduleId === ledger, 30_000);
    // Freeze it while it holds a ledger run it started less than 0.5 s ago (1 s of its 1.5 s of
    // work left): its claim is logged only when the attempt ends, so poll the queue.
    await waitUntil(
      async () =>
        (await t.pool.query(`SELECT 1 FROM run_queue WHERE schedule_id = $1 AND state = 'running' AND lease_owner = 'victim' AND started_at > sk_now() - interval '500 ms'`, [ledger])).rowCount === 1,
      20_000,
      "the frozen worker to hold a ledger run",
    );
    const frozenAt = await dbNowMs();
    frozen.signal("SIGSTOP");
    await waitUntil(async () => (await dbNowMs()) > frozenAt + (LEASE_SECONDS + 3) * 1000, 60_000, "past the lease");
    frozen.signal("SIGCONT");
    const to = frozenAt + (LEASE_SECONDS + 6) * 1000;
    await waitUntil(async () => (await dbNowMs()) > to + STATED * 1000, 60_000, "the window after the freeze");
    await waitAllDone([...ids, ledger], from, to);
    const rows = checkBound(await firstStarts(ids, from, to), ids, from, to);
    checkBound(await firstStarts([ledger], ledgerFrom, to), [ledger], ledgerFrom, to);
    // The fault mattered: slots of the frozen worker's partitions that came due while it was frozen
    // were started by the survivor, within the bound above, long before the worker woke.
    const takenOver = rows.filter(
      (r) => frozenParts.includes(r.partition) && r.scheduled_for.getTime() > frozenAt + 1000 && r.scheduled_for.getTime() < frozenAt + LEASE_SECONDS * 1000 && r.worker_id === "survivor",
    );
    expect(takenOver.length).toBeGreaterThan(5);

    // Fencing: the run the worker held when frozen was taken over; on waking, its write is rejected
    // (or, had it landed first, overwritten) and its finish is stale. Each slot's ledger row carries
    // the token and worker of the attempt that succeeded.
    await frozen.waitFor((l) => l.event === "run:finish:stale", 30_000);
    const { rows: ledgerRows } = await t.pool.query<{ scheduled_for: Date; fencing_token: number; worker_id: string; attempts: number; done_by: string }>(
      `SELECT l.scheduled_for, l.fencing_token, l.worker_id, r.attempts, r.worker_id AS done_by
       FROM ledger l JOIN runs r ON r.schedule_id = l.schedule_id AND r.scheduled_for = l.scheduled_for AND r.slot_seq = 0
       WHERE l.schedule_id = $1 AND r.state = 'done'`,
      [ledger],
    );
    const retried = ledgerRows.filter((r) => r.attempts > 1);
    expect(retried.length).toBeGreaterThan(0);
    for (const r of ledgerRows) expect({ token: r.fencing_token, worker: r.worker_id }).toEqual({ token: r.attempts, worker: r.done_by });
    // (Who ran the retry is not fixed: on a loaded machine the woken worker may rescue its own
    // expired run before the survivor does, with a new token, which is just as fenced.)
    expect(survivor.proc.exitCode).toBeNull();
    const worst = Math.max(...rows.map((r) => r.lateMs));
    console.log(JSON.stringify({ event: "test:bound:sigstop", statedSeconds: STATED, worstLateMs: worst, takenOver: takenOver.length, runs: rows.length }));
  }, 180_000);
});
