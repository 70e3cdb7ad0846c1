// Workers on three hosts: each host a network namespace with its own address (lib/testing/hosts.ts),
// each worker a real process in its host reaching a PostgreSQL cluster of this test's own over its
// own link (the cluster listens on the hosts' bridge). Oracles outside the worker: the runs and
// attempts tables, the server's own view of where each connection comes from (pg_stat_activity),
// and a trigger on the ledger (installWitnessTriggers) that records every accepted effect.
// Needs root and `ip netns` (CI runs as root); without them it is skipped, saying why.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PARTITION_ORPHANED_AFTER_SECONDS, PARTITION_RENEW_MS } from "../lib/partitions/leases";
import { worstCaseLatenessSeconds } from "../lib/schedules/lateness";
import { runClockFrom, setClock } from "../lib/testing/clock";
import { createHosts, hostsUnavailable, startHostsDatabase, type Hosts, type HostsDatabase } from "../lib/testing/hosts";
import { killWorkers, liveWorkers, startWorkers, type WorkerProcess } from "../lib/testing/spawn";
import { waitUntil } from "../lib/testing/wait";
import { WORKER_ALIVE_SECONDS } from "../lib/workers/liveness";
import { installWitnessTriggers } from "../scripts/chaos/database";

const POLL_MS = 200;
const LEASE_SECONDS = 5;
const PARTITION_LEASE_SECONDS = 15;
// Longer than the cut: the cut-off worker's statements wait for the link instead of being given up,
// so what it sent for the runs it lost reaches the server after the link comes back (TCP
// retransmits it) and must be refused there.
const QUERY_TIMEOUT_MS = 30_000;
const ENV = {
  SLOTKEEPER_POLL_INTERVAL_MS: String(POLL_MS),
  SLOTKEEPER_PARTITION_LEASE_SECONDS: String(PARTITION_LEASE_SECONDS),
  SLOTKEEPER_DB_QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS),
  SLOTKEEPER_ALERT_INTERVAL_SECONDS: "3600",
};
const STATED = worstCaseLatenessSeconds({ jitterSeconds: 0, leaseSeconds: LEASE_SECONDS }, POLL_MS);
const why = hostsUnavailable();

let hosts: Hosts;
let db: HostsDatabase;
let pool: pg.Pool;
let workers: WorkerProcess[] = [];

const dbNowMs = async () => (await pool.query<{ now: Date }>("SELECT sk_now() AS now")).rows[0].now.getTime();

async function heldBy(): Promise<Record<string, number[]>> {
  const { rows } = await pool.query<{ owner: string; parts: number[] }>(
    `SELECT owner, array_agg(partition ORDER BY partition) AS parts FROM partition_leases WHERE owner IS NOT NULL AND lease_expires_at > sk_now() GROUP BY owner`,
  );
  return Object.fromEntries(rows.map((r) => [r.owner, r.parts]));
}

/** One worker per host, named after it (+ suffix); resolves when every partition is held and each worker holds some. */
async function workersOnHosts(suffix = "", env: Record<string, string> = {}): Promise<WorkerProcess[]> {
  workers = (await Promise.all(hosts.hosts.map((h) => startWorkers(db.hostsUrl, [h.name + suffix], { ...ENV, ...env }, { netns: h.ns })))).flat();
  await waitUntil(
    async () => {
      const held = await heldBy();
      // The share is ceil(16 / 3) = 6: 6 + 6 + 4 is as settled as 6 + 5 + 5.
      return Object.values(held).flat().length === 16 && workers.every((w) => (held[w.id]?.length ?? 0) > 0);
    },
    60_000,
    "every host's worker to hold its share of the partitions",
  ).catch(async (err) => {
    const tail = workers.map((w) => `${w.id}: ${JSON.stringify(w.lines.slice(-5))} ${w.stderr().slice(-500)}`).join("\n");
    throw new Error(`${(err as Error).message}; held: ${JSON.stringify(await heldBy())}\n${tail}`);
  });
  return workers;
}

/** Where the server sees each worker connection come from. */
async function workerClientAddresses(): Promise<string[]> {
  const { rows } = await pool.query<{ addr: string }>(
    `SELECT DISTINCT host(client_addr) AS addr FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'slotkeeper:worker%' ORDER BY 1`,
  );
  return rows.map((r) => r.addr);
}

type Slot = { run_id: string; schedule_id: string; partition: number; scheduled_for: Date; first_ms: number; first_by: string; done_ms: number; done_by: string; attempts: number };

/** The runs of schedules `ids` with slots in [from, to] (ms): each first attempt's and the doing attempt's lateness and worker. */
async function slotsBetween(ids: number[], from: number, to: number): Promise<Slot[]> {
  const { rows } = await pool.query<Slot>(
    `SELECT r.id AS run_id, r.schedule_id, r.partition, r.scheduled_for,
            extract(epoch FROM f.started_at - r.scheduled_for) * 1000 AS first_ms, f.worker_id AS first_by,
            extract(epoch FROM r.started_at - r.scheduled_for) * 1000 AS done_ms, r.worker_id AS done_by, r.attempts
     FROM runs r JOIN run_attempts f ON f.run_id = r.id AND f.attempt = 1
     WHERE r.schedule_id = ANY($1::bigint[]) AND r.scheduled_for BETWEEN $2 AND $3`,
    [ids, new Date(from), new Date(to)],
  );
  return rows;
}

const show = (r: Slot, ms: number) => `${r.scheduled_for.toISOString()} schedule ${r.schedule_id} p${r.partition}: ${Math.round(ms)} ms (first ${r.first_by}, done ${r.done_by})`;

/**
 * One schedule per partition every `every` s (sql-ledger, catch-up all) and a slow ledger write in
 * partition `slowPartition`, to be cut off mid-handler; slots from the first whole `every` after now.
 */
async function ledgerSchedules(prefix: string, every: number, slowPartition: number) {
  const from = Math.ceil((await dbNowMs()) / (every * 1000) + 1) * every * 1000;
  const { rows: made } = await pool.query<{ id: string }>(
    `INSERT INTO schedules (name, handler, payload, every_seconds, lease_seconds, catch_up, next_slot_at, partition)
     SELECT $5 || p, 'sql-ledger', '{}'::jsonb, $1::int, $2::int, 'all'::catch_up_policy, $3::timestamptz, p FROM generate_series(0, 15) p
     UNION ALL SELECT $5 || 'slow', 'sql-ledger', '{"delayMs":1500,"interruptible":false}'::jsonb, $1::int, $2::int, 'all'::catch_up_policy, $3::timestamptz, $4::int
     RETURNING id`,
    [every, LEASE_SECONDS, new Date(from), slowPartition, prefix],
  );
  const ids = made.map((r) => Number(r.id));
  return { from, ids, slow: ids.at(-1)! };
}

/** Wait until `victim` holds schedule `slow`'s run, started less than half a second ago: its ledger write is still to come. */
async function untilHoldingSlowRun(slow: number, victim: WorkerProcess) {
  await waitUntil(
    async () =>
      (await pool.query(`SELECT 1 FROM run_queue WHERE schedule_id = $1 AND state = 'running' AND lease_owner = $2 AND started_at > sk_now() - interval '500 ms'`, [slow, victim.id])).rowCount === 1,
    30_000,
    "the victim to hold the slow ledger run",
  );
}

/** The cut cases' schedules fire every this many seconds. */
const EVERY = 2;

/**
 * The start of a cut: a worker on each host (ids end in `suffix`), ledger schedules (names start
 * with `prefix`) with the slow one in a partition of the first host's worker, a few slots run; then
 * the first host's link is cut while its worker holds the slow run it started less than half a
 * second ago, so its write is still to come and goes into a dead link. The caller restores the link.
 */
async function cutWhileHoldingSlowRun(suffix: string, prefix: string) {
  const [victim] = await workersOnHosts(suffix);
  const cutHost = hosts.hosts[0];
  const victimParts = (await heldBy())[victim.id];
  const { from, ids, slow } = await ledgerSchedules(prefix, EVERY, victimParts[0]);
  await waitUntil(async () => (await dbNowMs()) > from + 4_000, 30_000, "a few slots to run");
  await untilHoldingSlowRun(slow, victim);
  const { rows: heldAtCut } = await pool.query<{ run_id: string }>(`SELECT run_id FROM run_queue WHERE state = 'running' AND lease_owner = $1`, [victim.id]);
  const cutAt = await dbNowMs();
  cutHost.cut();
  return { victim, cutHost, victimParts, from, ids, slow, heldAtCut, cutAt };
}

/**
 * Wait until nobody renews `victim`'s partitions (PARTITION_ORPHANED_AFTER_SECONDS without a
 * renewal), and check that came within that bound (+ 2 s) of the cut; returns how long it took.
 */
async function untilOrphaned(victim: WorkerProcess, cutAt: number): Promise<number> {
  await waitUntil(
    async () =>
      (await pool.query(`SELECT 1 FROM partition_leases WHERE owner = $1 AND renewed_at > sk_now() - make_interval(secs => $2)`, [victim.id, PARTITION_ORPHANED_AFTER_SECONDS])).rowCount === 0,
    15_000,
    "the victim's partitions to be orphaned",
  );
  const orphanedAfterMs = (await dbNowMs()) - cutAt;
  expect(orphanedAfterMs).toBeLessThan((PARTITION_ORPHANED_AFTER_SECONDS + 2) * 1000);
  return orphanedAfterMs;
}

/**
 * Once every run of schedules `ids` with a slot in [from, to] is done: those slots, each exactly
 * once (the test counts an EVERY-second schedule's slots itself).
 */
async function everySlotDone(ids: number[], from: number, to: number): Promise<Slot[]> {
  await waitUntil(
    async () =>
      (await pool.query(`SELECT 1 FROM run_status WHERE schedule_id = ANY($1::bigint[]) AND scheduled_for BETWEEN $2 AND $3 AND state <> 'done'`, [ids, new Date(from), new Date(to)])).rowCount === 0,
    60_000,
    "every run in the window to be done",
  );
  const slots = await slotsBetween(ids, from, to);
  const expected = (Math.floor(to / (EVERY * 1000)) - Math.ceil(from / (EVERY * 1000)) + 1) * ids.length;
  expect(slots).toHaveLength(expected);
  expect(new Set(slots.map((r) => `${r.schedule_id}@${r.scheduled_for.toISOString()}`)).size).toBe(expected);
  return slots;
}

/**
 * Fencing, from the witness (every accepted ledger write, stamped with the server's wall clock; the
 * test clock's shift turns that into sk_now() time): an attempt's write counts only while it holds
 * the run, so no write of a superseded attempt may be accepted at or after the next attempt
 * started (a write before it, whose finish the cut lost, is the at-least-once the handler's token
 * is for: the successor overwrites it). Returns the writes that broke that.
 */
async function supersededWritesAccepted(ids: number[]) {
  const { rows } = await pool.query<{ key: string; token: number; worker: string; at: Date; next_started: Date }>(
    `SELECT w.idempotency_key AS key, w.fencing_token AS token, w.worker_id AS worker, w.at + c.shift AS at, n.started_at AS next_started
     FROM chaos_ledger_writes w JOIN ledger l USING (idempotency_key)
     JOIN runs r ON r.schedule_id = l.schedule_id AND r.scheduled_for = l.scheduled_for AND r.slot_seq = 0
     JOIN run_attempts n ON n.run_id = r.id AND n.attempt = w.fencing_token + 1
     CROSS JOIN sk_clock c
     WHERE r.schedule_id = ANY($1::bigint[]) AND w.at + c.shift >= n.started_at`,
    [ids],
  );
  return rows;
}

/** Ledger rows of done slots that do not carry the token and worker of the attempt that did the work (a run in flight has no doer yet: its runs row is written at its finish). */
async function ledgerRowsNotFromTheDoer(ids: number[]) {
  const { rows } = await pool.query<{ key: string }>(
    `SELECT l.idempotency_key AS key, l.fencing_token, l.worker_id, r.attempts, r.worker_id AS done_by
     FROM ledger l JOIN runs r ON r.schedule_id = l.schedule_id AND r.scheduled_for = l.scheduled_for AND r.slot_seq = 0
     WHERE r.schedule_id = ANY($1::bigint[]) AND r.state = 'done' AND (l.fencing_token <> r.attempts OR l.worker_id <> r.worker_id)`,
    [ids],
  );
  return rows;
}

describe.skipIf(why !== null)(why ? `workers on several hosts (skipped: ${why})` : "workers on several hosts", () => {
  beforeAll(async () => {
    hosts = createHosts(3);
    try {
      db = await startHostsDatabase(hosts);
      await installWitnessTriggers(db.url);
      pool = new pg.Pool({ connectionString: db.url, max: 4 });
    } catch (err) {
      hosts.cleanup();
      throw err;
    }
  }, 180_000);

  afterAll(async () => {
    await killWorkers(workers);
    await pool?.end();
    await db?.stop();
    hosts?.cleanup();
  }, 120_000);

  it("N runs due at one instant start exactly once, spread over the three hosts, each worker talking over its own link", async () => {
    const N = 300;
    const T = new Date("2030-01-01T10:00:00Z");
    // Stand the clock just before the instant while the workers start and take their partitions.
    await setClock(pool, new Date(T.getTime() - 1_000));
    await pool.query(
      `INSERT INTO schedules (name, handler, every_seconds, catch_up, next_slot_at, partition)
       SELECT 'spike-' || g, 'sql-ledger', 3600, 'latest', $2, mod(g, 16) FROM generate_series(1, $1::int) g`,
      [N, T],
    );
    // Capacity for the spike (the stated bound assumes a free slot): 3 × 60 handlers at once.
    await workersOnHosts("", { SLOTKEEPER_CONCURRENCY: "60" });
    await waitUntil(async () => (await pool.query(`SELECT 1 FROM runs WHERE scheduled_for = $1`, [T])).rowCount === N, 60_000, "the instant's runs to be written");
    // Every worker connection comes from its host's own address, none from this namespace.
    expect(await workerClientAddresses()).toEqual(hosts.hosts.map((h) => h.address).sort());
    await runClockFrom(pool, new Date(T.getTime() - 1_000));
    await waitUntil(async () => (await pool.query(`SELECT 1 FROM run_status WHERE scheduled_for = $1 AND state = 'done'`, [T])).rowCount === N, 60_000, "every run to be done");

    const { rows: runs } = await pool.query<{ id: string; partition: number; attempts: number; worker_id: string; late_ms: number }>(
      `SELECT r.id, r.partition, (SELECT count(*)::int FROM run_attempts a WHERE a.run_id = r.id) AS attempts, r.worker_id,
              extract(epoch FROM r.started_at - r.scheduled_for) * 1000 AS late_ms
       FROM runs r WHERE r.scheduled_for = $1`,
      [T],
    );
    expect(runs).toHaveLength(N);
    expect(runs.filter((r) => r.attempts !== 1)).toEqual([]);
    // Each effect happened once: the witness saw exactly one accepted ledger write per slot.
    const { rows: writes } = await pool.query<{ key: string; n: number; worker_id: string }>(
      `SELECT w.idempotency_key AS key, count(*)::int AS n, min(w.worker_id) AS worker_id FROM chaos_ledger_writes w GROUP BY 1`,
    );
    expect(writes).toHaveLength(N);
    expect(writes.filter((w) => w.n !== 1)).toEqual([]);
    // Spread: each host ran the runs of the partitions it held, and every host ran some.
    const byHost = Object.fromEntries(hosts.hosts.map((h) => [h.name, runs.filter((r) => r.worker_id === h.name).length]));
    // (Which host ran which partition is not fixed: shares may still move while the runs go.)
    for (const h of hosts.hosts) expect(byHost[h.name], `runs on ${h.name}`).toBeGreaterThan(N / 8);
    expect(runs.filter((r) => !byHost[r.worker_id]).map((r) => `run ${r.id} by ${r.worker_id}`)).toEqual([]);
    const worst = Math.max(...runs.map((r) => Number(r.late_ms)));
    expect(worst).toBeLessThanOrEqual(STATED * 1000);
    console.log(JSON.stringify({ event: "test:hosts:spike", runs: N, byHost, worstStartLateMs: Math.round(worst) }));
    await killWorkers(workers);
  }, 240_000);

  it(`a host whose link goes down loses its partitions and running runs to the others within the stated ${STATED} s; back up, its stale writes are refused`, async () => {
    await runClockFrom(pool, new Date("2030-01-02T10:00:00Z"));
    const { victim, cutHost, victimParts, from, ids, slow, heldAtCut, cutAt } = await cutWhileHoldingSlowRun("-cut", "cut-");
    const DOWN_MS = (LEASE_SECONDS + 4) * 1000;
    let restoredAt = 0;
    try {
      // Its partitions are orphaned (nobody renews them: PARTITION_ORPHANED_AFTER_SECONDS), so the
      // other hosts tick and claim there; they take the leases themselves only once its workers row
      // stops counting it live (30 s), longer than this cut.
      const orphanedAfterMs = await untilOrphaned(victim, cutAt);
      await waitUntil(async () => (await dbNowMs()) > cutAt + DOWN_MS, 60_000, "the link to stay down");
      expect(victim.proc.exitCode).toBeNull(); // cut off, not dead
      cutHost.restore();
      restoredAt = await dbNowMs();
      console.log(JSON.stringify({ event: "test:hosts:partitions-orphaned", afterMs: orphanedAfterMs }));
    } finally {
      if (!restoredAt) cutHost.restore();
    }
    const to = restoredAt + 6_000;
    await waitUntil(async () => (await dbNowMs()) > to + STATED * 1000, 60_000, "the window after the link came back");
    const slots = await everySlotDone(ids, from, to);
    // Every slot's first attempt, and the attempt that did its work, started within the stated bound.
    expect(slots.filter((r) => r.first_ms > STATED * 1000).map((r) => show(r, r.first_ms))).toEqual([]);
    expect(slots.filter((r) => r.done_ms > STATED * 1000).map((r) => show(r, r.done_ms))).toEqual([]);
    // The fault mattered: while the link was down, the victim's partitions' slots were started by the other hosts...
    const whileDown = slots.filter((r) => victimParts.includes(r.partition) && r.scheduled_for.getTime() > cutAt + 1_000 && r.scheduled_for.getTime() < restoredAt);
    expect(whileDown.length).toBeGreaterThan(10);
    expect(whileDown.filter((r) => r.done_by === victim.id).map((r) => show(r, r.done_ms))).toEqual([]);
    // ...and the runs it held at the cut and had not finished (the slow one at least, with a second
    // of work left) were done by a later attempt, within the bound above.
    const held = slots.filter((r) => heldAtCut.some((h) => h.run_id === r.run_id));
    const slowHeld = held.filter((r) => Number(r.schedule_id) === slow);
    expect(slowHeld).toHaveLength(1);
    expect(slowHeld[0].attempts, show(slowHeld[0], slowHeld[0].done_ms)).toBeGreaterThan(1);
    const { rows: lostRuns } = await pool.query<{ run_id: string }>(`SELECT run_id FROM run_attempts WHERE worker_id = $1 AND outcome = 'lease_expired'`, [victim.id]);
    expect(lostRuns.map((r) => r.run_id)).toContain(slowHeld[0].run_id);
    for (const r of slots.filter((s) => lostRuns.some((l) => l.run_id === s.run_id))) expect(r.attempts, show(r, r.done_ms)).toBeGreaterThan(1);

    // Fencing (supersededWritesAccepted), and each slot's ledger row carries the token and worker of
    // the attempt that did the work.
    expect(await supersededWritesAccepted(ids)).toEqual([]);
    expect(await ledgerRowsNotFromTheDoer(ids)).toEqual([]);
    const { rows: overwritten } = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM chaos_ledger_writes w JOIN ledger l USING (idempotency_key) WHERE l.schedule_id = ANY($1::bigint[]) AND w.fencing_token < l.fencing_token`,
      [ids],
    );
    // Its late statements did arrive, and matched nothing: the slow run's write (the victim sent
    // it into the dead link) was refused, or its finish was stale.
    await victim.waitFor((l) => l.event === "run:finish:stale" || l.event === "ledger:write:rejected", 30_000);
    const stale = victim.lines.filter((l) => l.event === "run:finish:stale" || l.event === "ledger:write:rejected");
    expect(victim.proc.exitCode).toBeNull();
    console.log(
      JSON.stringify({
        event: "test:hosts:cut",
        statedSeconds: STATED,
        worstFirstStartMs: Math.round(Math.max(...slots.map((r) => r.first_ms))),
        worstDoneStartMs: Math.round(Math.max(...slots.map((r) => r.done_ms))),
        whileDown: whileDown.length,
        heldAtCut: held.length,
        lostAttemptsTakenOver: lostRuns.length,
        victimStaleEvents: stale.map((l) => l.event),
        supersededWritesOverwritten: overwritten[0].n,
        slots: slots.length,
      }),
    );
  }, 300_000);

  // Longer than every timer that hands work over: the run lease (5 s), the partition lease (15 s)
  // and the workers row's liveness (WORKER_ALIVE_SECONDS, 30 s), after which the other hosts count
  // one worker fewer and take every partition as their own.
  const LONG_DOWN_SECONDS = WORKER_ALIVE_SECONDS + 5;
  it(`a host cut off for ${LONG_DOWN_SECONDS} s loses every partition and run to the others within the stated ${STATED} s; back up, it rejoins and claims again, and nothing it did for a run it lost is accepted`, async () => {
    // A clean start a day later: no worker of an earlier case still running (each case starts its
    // own), and the earlier cases' schedules deleted with their waiting runs withdrawn, so the day
    // the clock jumps is not a backlog of their catch-up-all slots for this case's hosts to work off.
    await killWorkers(liveWorkers());
    await pool.query(`
      WITH unqueued AS (DELETE FROM run_queue WHERE state = 'pending' RETURNING run_id)
      UPDATE runs SET state = 'skipped', skip_reason = 'deleted', finished_at = sk_now(), skipped_until = scheduled_for, skipped_count = 1
      WHERE id IN (SELECT run_id FROM unqueued)`);
    await pool.query(`UPDATE schedules SET deleted_at = sk_now(), enabled = false WHERE deleted_at IS NULL`);
    await runClockFrom(pool, new Date("2030-01-03T10:00:00Z"));
    const { victim, cutHost, victimParts, from, ids, slow, heldAtCut, cutAt } = await cutWhileHoldingSlowRun("-long", "long-");
    let restoredAt = 0;
    let orphanedAfterMs = 0;
    let takenOverAfterMs = 0;
    try {
      orphanedAfterMs = await untilOrphaned(victim, cutAt);
      // Once its workers row stops counting it live, the others' fair share is 8 and they hold all
      // 16 leases themselves: within the liveness window (from its last heartbeat, before the cut)
      // and one lease pass, and while the link is still down.
      await waitUntil(
        async () =>
          (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM partition_leases WHERE owner IS NOT NULL AND owner <> $1 AND lease_expires_at > sk_now()`, [victim.id])).rows[0].n === 16,
        (WORKER_ALIVE_SECONDS + 5) * 1000,
        "the other hosts to hold every partition",
      );
      takenOverAfterMs = (await dbNowMs()) - cutAt;
      expect(takenOverAfterMs).toBeLessThan((WORKER_ALIVE_SECONDS + 2 * (PARTITION_RENEW_MS / 1000) + 1) * 1000);
      expect(Object.keys(await heldBy())).not.toContain(victim.id);
      await waitUntil(async () => (await dbNowMs()) > cutAt + LONG_DOWN_SECONDS * 1000, 60_000, "the link to stay down");
      expect(victim.proc.exitCode).toBeNull(); // cut off, not dead
      cutHost.restore();
      restoredAt = await dbNowMs();
    } finally {
      if (!restoredAt) cutHost.restore();
    }
    // Back: it heartbeats, takes its share of the partitions again and claims runs there. Its loops
    // may be waiting out a back-off of up to 30 s (they double from the poll interval), so this is
    // waited on, not bounded, and measured.
    await waitUntil(
      async () =>
        (await pool.query(`SELECT 1 FROM runs WHERE worker_id = $1 AND started_at > $2 AND schedule_id = ANY($3::bigint[])`, [victim.id, new Date(restoredAt), ids])).rowCount! > 0 &&
        ((await heldBy())[victim.id]?.length ?? 0) > 0,
      90_000,
      "the victim to hold partitions and start runs again",
    );
    const rejoinedAt = await dbNowMs();
    const to = rejoinedAt + 6_000;
    await waitUntil(async () => (await dbNowMs()) > to + STATED * 1000, 60_000, "the window after the victim rejoined");
    // Each slot from the first to the window's end exists once (everySlotDone counts them itself)...
    const slots = await everySlotDone(ids, from, to);
    // ...and started within the stated bound, its first attempt and the one that did the work: the
    // cut, the hand-over of every partition and the victim's return included.
    expect(slots.filter((r) => r.first_ms > STATED * 1000).map((r) => show(r, r.first_ms))).toEqual([]);
    expect(slots.filter((r) => r.done_ms > STATED * 1000).map((r) => show(r, r.done_ms))).toEqual([]);
    // While the link was down nothing was done by the victim after the cut: its partitions' slots
    // were the other hosts' work.
    const whileDown = slots.filter((r) => victimParts.includes(r.partition) && r.scheduled_for.getTime() > cutAt + 1_000 && r.scheduled_for.getTime() < restoredAt);
    expect(whileDown.length).toBeGreaterThan(LONG_DOWN_SECONDS);
    expect(whileDown.filter((r) => r.done_by === victim.id).map((r) => show(r, r.done_ms))).toEqual([]);
    // The runs it held at the cut were taken over: the slow one lost its lease and a later attempt
    // by another host did the work.
    const slowHeld = slots.filter((r) => heldAtCut.some((h) => h.run_id === r.run_id) && Number(r.schedule_id) === slow);
    expect(slowHeld).toHaveLength(1);
    expect(slowHeld[0].attempts, show(slowHeld[0], slowHeld[0].done_ms)).toBeGreaterThan(1);
    expect(slowHeld[0].done_by).not.toBe(victim.id);
    const { rows: lostRuns } = await pool.query<{ run_id: string }>(`SELECT run_id FROM run_attempts WHERE worker_id = $1 AND outcome = 'lease_expired'`, [victim.id]);
    expect(lostRuns.map((r) => r.run_id)).toContain(slowHeld[0].run_id);
    // Fencing: no write of a superseded attempt (the victim's, sent into the dead link or after it
    // came back) was accepted once its successor had started, and each ledger row is the doer's.
    expect(await supersededWritesAccepted(ids)).toEqual([]);
    expect(await ledgerRowsNotFromTheDoer(ids)).toEqual([]);
    const { rows: victimWritesWhileDown } = await pool.query<{ key: string }>(
      `SELECT w.idempotency_key AS key FROM chaos_ledger_writes w CROSS JOIN sk_clock c
       WHERE w.worker_id = $1 AND w.at + c.shift > $2 AND w.at + c.shift < $3`,
      [victim.id, new Date(cutAt + 1_000), new Date(restoredAt)],
    );
    expect(victimWritesWhileDown).toEqual([]);
    // Back with the others, no duplicates: every slot due once the victim was claiming again ran
    // once, by one attempt, with one accepted ledger write.
    const after = slots.filter((r) => r.scheduled_for.getTime() > rejoinedAt);
    expect(after.length).toBeGreaterThan(0);
    expect(after.filter((r) => r.attempts !== 1).map((r) => show(r, r.done_ms))).toEqual([]);
    const { rows: writesAfter } = await pool.query<{ key: string; n: number }>(
      `SELECT l.idempotency_key AS key, count(w.*)::int AS n FROM ledger l LEFT JOIN chaos_ledger_writes w USING (idempotency_key)
       WHERE l.schedule_id = ANY($1::bigint[]) AND l.scheduled_for > $2 AND l.scheduled_for <= $3 GROUP BY 1`,
      [ids, new Date(rejoinedAt), new Date(to)],
    );
    expect(writesAfter).toHaveLength(after.length);
    expect(writesAfter.filter((w) => w.n !== 1)).toEqual([]);
    const byVictimAfter = after.filter((r) => r.done_by === victim.id).length;
    expect(victim.proc.exitCode).toBeNull();
    console.log(
      JSON.stringify({
        event: "test:hosts:long-cut",
        downSeconds: LONG_DOWN_SECONDS,
        statedSeconds: STATED,
        orphanedAfterMs,
        everyPartitionTakenAfterMs: takenOverAfterMs,
        rejoinedAfterRestoreMs: rejoinedAt - restoredAt,
        worstFirstStartMs: Math.round(Math.max(...slots.map((r) => r.first_ms))),
        worstDoneStartMs: Math.round(Math.max(...slots.map((r) => r.done_ms))),
        whileDown: whileDown.length,
        heldAtCut: heldAtCut.length,
        lostAttemptsTakenOver: lostRuns.length,
        slotsAfterRejoin: after.length,
        byVictimAfterRejoin: byVictimAfter,
        slots: slots.length,
      }),
    );
  }, 420_000);
});
