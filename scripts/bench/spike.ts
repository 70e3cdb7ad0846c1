// Slotkeeper's spike and steady drain: real worker processes (worker/main.ts) on a bench database.
import path from "node:path";
import type pg from "pg";
import { createDb, createPool, type Db } from "../../lib/db/client";
import { ALERTS_LOCK_KEY } from "../../lib/alerts/evaluate";
import { tickOnce } from "../../lib/runs/tick";
import { workerNodeArgs } from "../../worker/node-flags";
import { runClockFrom, setClock } from "../../lib/testing/clock";
import { measureHeartbeatHot, type HotReport } from "./hot";
import { countCpu, CPU_LEAD_MS, DRAIN_POLL_MS, readRssMb, sampleRss, startNode, stopAll, waitFor, type CpuPerRun, type Proc } from "./procs";
import { checkpointBeforePhase, checkRuns, markPhase, prepareSpikeTables, sincePhase, spikeStats, statementsBetween, statementsSnapshot, type RunsCheck, type SpikeStats, type StatementUse } from "./stats";

export type SpikeOptions = {
  url: string;
  schedules: number;
  workers: number;
  batch: number;
  partitions: number;
  concurrency: number;
  pollIntervalMs: number;
  steadyRuns: number;
  /** Leave the alert evaluation loop at its default interval. */
  alerts: boolean;
  /**
   * 1: every schedule runs `noop` on every worker. 2: the schedules are split over `bench-a` and
   * `bench-b` (each partition holds both), and each worker serves one of them
   * (scripts/bench/split-worker.ts), so half of every partition's runs are not its holder's to claim.
   */
  handlers?: 1 | 2;
  /** Workers on these hosts (network namespaces, lib/testing/hosts.ts), worker i on host i mod n, reaching the database at `workerUrl`. */
  hosts?: { name: string; ns: string }[];
  workerUrl?: string;
};

/** The handler names of the split variant; worker i serves SPLIT_HANDLERS[i % 2]. */
export const SPLIT_HANDLERS = ["bench-a", "bench-b"] as const;

export type SpikeReport = {
  materialise: { slots: number; seconds: number; slotsPerSecond: number };
  /** The first alert pass over every schedule, from when the bench first saw its lock (so at least this long; null when it was over unseen). */
  alertPassSecondsAtLeast: number | null;
  spike: SpikeStats & {
    /** From the runs rows: count(started_at) = S and every run done. */
    check: RunsCheck;
    statements: StatementUse[] | null;
    /** CPU per run in the phase: PostgreSQL on this machine (null when elsewhere) and the workers. */
    cpuPerRun: CpuPerRun;
    /** Each worker's share: its runs and its first and last start after the due instant (it claims only in its partitions, so the last to finish sets the spike's end). */
    byWorker: { worker: string; runs: number; firstStartSeconds: number; lastStartSeconds: number }[];
    attemptsRows: number; attemptTableRows: number; peakWorkerRssMb: number[]; startupPeakWorkerRssMb: number[]; databaseSizeMb: number;
    /**
     * Runs started by a worker that did not hold their partition when the spike drained: taken in
     * its sweep partitions (lib/partitions/sweep.ts: runs of handlers the partition's holder does
     * not serve), in a partition that changed hands, or in an orphaned one.
     */
    sweptRuns: number };
  /** Seconds and runs/s from the first start to the last finish; firstStartAfterSeconds and the *FromDue pair count from the due instant. */
  steady: { runs: number; seconds: number; runsPerSecond: number; firstStartAfterSeconds: number; secondsFromDue: number; runsPerSecondFromDue: number };
  heartbeatHot: HotReport;
};

/** The minute-zero slot every bench schedule shares (the DB clock is moved to it; wall time is irrelevant). */
export const BENCH_DUE = new Date("2030-01-01T10:00:00Z");

// Two plain index scans of run_queue, the ORDER BY naming each partial index (each marks the dead
// entries it passes): the IN form re-read every claimed run's dead version, ~24 ms of database time per poll.
const drained = async (pool: pg.Pool) =>
  (
    await pool.query<{ busy: boolean }>(
      `SELECT (SELECT 1 FROM run_queue WHERE state = 'pending' ORDER BY partition, run_after LIMIT 1) IS NOT NULL
         OR (SELECT 1 FROM run_queue WHERE state = 'running' ORDER BY schedule_id, scheduled_for LIMIT 1) IS NOT NULL AS busy`,
    )
  ).rows[0].busy === false;

/** Create S hourly minute-zero schedules and materialise their slot (with tickOnce) ten minutes before it is due. */
export async function materialise(pool: pg.Pool, db: Db, o: Pick<SpikeOptions, "schedules" | "partitions" | "handlers">): Promise<SpikeReport["materialise"]> {
  // Stand the clock ten minutes before the slot: materialising is part of the tick's normal horizon
  // work. The schedules are created then, on that clock (created_at defaults to sk_now()).
  await setClock(pool, new Date(BENCH_DUE.getTime() - 600_000));
  // Split: the handler alternates every `partitions` schedules, so each partition holds about half
  // of each. Partition by the product's rule (sk_partition_of of the id, taken from the identity
  // sequence first; nextval in the subquery's select list runs once per row).
  await pool.query(
    `INSERT INTO schedules (id, name, handler, cron, timezone, catch_up, next_slot_at, partition)
     OVERRIDING SYSTEM VALUE
     SELECT n.id, 'bench-' || g, CASE WHEN $4::boolean THEN (ARRAY[$5, $6])[1 + mod(g / $3, 2)] ELSE 'noop' END, '0 * * * *', 'UTC', 'latest', $2, sk_partition_of(n.id, $3)
     FROM (SELECT g, nextval(pg_get_serial_sequence('schedules', 'id')) AS id FROM generate_series(1, $1::int) g) n`,
    [o.schedules, BENCH_DUE, o.partitions, o.handlers === 2, SPLIT_HANDLERS[0], SPLIT_HANDLERS[1]],
  );
  await pool.query(`ANALYZE schedules`);
  const started = performance.now();
  // Two tickers on disjoint partitions, as two workers holding half the partitions each would.
  const halves = [0, 1].map((h) => Array.from({ length: o.partitions }, (_, p) => p).filter((p) => p % 2 === h));
  await Promise.all(
    halves.map(async (partitions) => {
      for (;;) {
        const r = await tickOnce(db, { partitions, horizonSeconds: 900, graceSeconds: 30, batchSize: 1000, maxBatches: 10 });
        if (r.schedules === 0) break;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const { rows } = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM runs WHERE scheduled_for = $1`, [BENCH_DUE]);
  await prepareSpikeTables(pool, ["runs", "run_queue"]);
  return { slots: rows[0].n, seconds: Math.round(seconds * 100) / 100, slotsPerSecond: Math.round(rows[0].n / seconds) };
}

/**
 * Wait until every worker has started, the partitions are held and fairly shared, and the start-up
 * passes (the first alert pass included) are over; returns how long that first alert pass took
 * (at least), or null when it was over unseen.
 */
export async function awaitWorkersReady(pool: pg.Pool, o: Pick<SpikeOptions, "workers" | "partitions">): Promise<number | null> {
  await waitFor(
    "workers to start and hold every partition",
    async () => {
      const { rows } = await pool.query<{ workers: number; held: number }>(
        `SELECT (SELECT count(*)::int FROM workers WHERE stopped_at IS NULL) AS workers,
                (SELECT count(*)::int FROM partition_leases WHERE owner IS NOT NULL AND lease_expires_at > sk_now()) AS held`,
      );
      return rows[0].workers >= o.workers && rows[0].held >= o.partitions;
    },
    120_000,
    200,
  );
  // Let the fair share settle (a lease pass is 5 s) only if someone still holds more than theirs.
  await waitFor(
    "partition shares to settle",
    async () => {
      const { rows } = await pool.query<{ max: number }>(
        `SELECT coalesce(max(n), 0)::int AS max FROM (SELECT count(*) AS n FROM partition_leases WHERE owner IS NOT NULL GROUP BY owner) x`,
      );
      return rows[0].max <= Math.ceil(o.partitions / o.workers);
    },
    30_000,
    200,
  ).catch((err) => console.error(String(err)));
  // Start-up passes (alerts over every schedule, a first retention sweep) must be over: no worker
  // transaction older than a second.
  await waitFor(
    "workers' start-up passes to finish",
    async () =>
      (
        await pool.query(
          `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'slotkeeper:worker'
             AND xact_start < now() - interval '1 second' LIMIT 1`,
        )
      ).rowCount === 0,
    300_000,
    200,
  );
  // The first alert pass (every schedule's health, at worker start) must be over too: it is
  // short transactions now, so the wait above does not see it; its advisory lock does.
  const alertPass = async () =>
    ((
      await pool.query(
        `SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
           AND objid = (hashtext($1)::bigint & 4294967295)::oid LIMIT 1`,
        [ALERTS_LOCK_KEY],
      )
    ).rowCount ?? 0) > 0;
  const alertBegan = await waitFor("the first alert pass to begin", alertPass, 15_000, 100).then(
    () => performance.now(),
    () => null,
  );
  await waitFor("the first alert pass to end", async () => !(await alertPass()), 300_000, 200);
  // How long one alert pass over every schedule took (it runs every SLOTKEEPER_ALERT_INTERVAL_SECONDS).
  return alertBegan === null ? null : Math.round((performance.now() - alertBegan) / 100) / 10;
}

/** Start W worker processes (worker/main.ts) on the bench database. */
export function startWorkers(o: Pick<SpikeOptions, "url" | "workers" | "batch" | "concurrency" | "pollIntervalMs" | "alerts" | "handlers" | "hosts" | "workerUrl">): Proc[] {
  return Array.from({ length: o.workers }, (_, i) => {
    const host = o.hosts?.length ? o.hosts[i % o.hosts.length] : undefined;
    return startNode(workerNodeArgs(o.handlers === 2 ? path.join("scripts", "bench", "split-worker.ts") : path.join("worker", "main.ts")), {
      ...(o.handlers === 2 ? { SK_BENCH_HANDLER: SPLIT_HANDLERS[i % 2] } : {}),
      DATABASE_URL: o.workerUrl ?? o.url,
      LOG_LEVEL: "warn",
      SLOTKEEPER_WORKER_ID: host ? `bench-${host.name}-${i}` : `bench-${i}`,
      SLOTKEEPER_CLAIM_BATCH: String(o.batch),
      SLOTKEEPER_CONCURRENCY: String(o.concurrency),
      SLOTKEEPER_POLL_INTERVAL_MS: String(o.pollIntervalMs),
      // The alert pass evaluates every live schedule's health in one transaction; at 400,000
      // schedules that took each worker to ~3.5 GB RSS and held a long transaction through the
      // spike (measured). Run it once at start, not during the measurement.
      ...(o.alerts ? {} : { SLOTKEEPER_ALERT_INTERVAL_SECONDS: "3600" }),
    }, [], host?.ns);
  });
}

/** The spike (S runs due at one instant, W workers) and then a steady drain of N runs on the same workers. */
export async function runSpike(pool: pg.Pool, db: Db, o: SpikeOptions): Promise<SpikeReport> {
  const mat = await materialise(pool, db, o);
  // Freeze the clock just before the slot while the workers start, register and take their
  // partitions, at the instant it later runs on from: a clock that jumped forward would make every
  // partition lease look unrenewed for that long, and past 3 s every partition orphaned
  // (lib/partitions/leases.ts), so each worker would claim in all of them at the due instant.
  await setClock(pool, new Date(BENCH_DUE.getTime() - 1_000));
  const procs = startWorkers(o);
  let stopRss = () => {};
  try {
    const alertPassSecondsAtLeast = await awaitWorkersReady(pool, o);
    // RSS during dispatch: sampled (VmRSS) from here on; the start-up high-water mark is reported apart.
    const startupPeakRssMb = procs.map((p) => Math.round(readRssMb(p.pid, "VmHWM")));
    stopRss = sampleRss(procs);
    await checkpointBeforePhase(pool);
    const mark = await markPhase(pool);
    const statementsBefore = await statementsSnapshot(pool);
    // Let the clock run from one second before the slot: the due instant arrives in real time.
    await runClockFrom(pool, new Date(BENCH_DUE.getTime() - 1_000));
    await new Promise((r) => setTimeout(r, 1_000 - CPU_LEAD_MS));
    const cpu = countCpu(procs);
    await waitFor("spike to drain", () => drained(pool), 600_000, DRAIN_POLL_MS);
    const stats = await spikeStats(pool, `SELECT started_at, finished_at, due_at FROM runs WHERE scheduled_for = '${BENCH_DUE.toISOString()}'`, BENCH_DUE);
    const cpuPerRun = cpu(stats.runs);
    const server = await sincePhase(pool, mark, stats.runs);
    const check = await checkRuns(pool, `SELECT started_at, state FROM runs WHERE scheduled_for = $1`, o.schedules, [BENCH_DUE]);
    const statements = statementsBetween(statementsBefore, await statementsSnapshot(pool));
    const { rows: byWorker } = await pool.query<{ worker: string; runs: number; first: number; last: number }>(
      `SELECT worker_id AS worker, count(*)::int AS runs, extract(epoch FROM min(started_at) - $1::timestamptz)::float8 AS first,
              extract(epoch FROM max(started_at) - $1::timestamptz)::float8 AS last
       FROM runs WHERE scheduled_for = $1 GROUP BY worker_id ORDER BY worker_id`,
      [BENCH_DUE],
    );
    const { rows: swept } = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM runs r LEFT JOIN partition_leases pl ON pl.partition = r.partition
       WHERE r.scheduled_for = $1 AND pl.owner IS DISTINCT FROM r.worker_id`,
      [BENCH_DUE],
    );
    const { rows: extra } = await pool.query<{ attempts: number; attempt_rows: number; size: number }>(
      `SELECT (SELECT count(*)::int FROM run_attempts) AS attempts, (SELECT count(*)::int FROM attempts) AS attempt_rows, pg_database_size(current_database()) / 1048576.0 AS size`,
    );
    stopRss();
    const spikeRss = procs.map((p) => Math.round(p.peakRssMb));

    // Steady: N pending runs of existing schedules, all due at one instant T, one second after the
    // clock resumes. The clock stands still while they go in (their insert, trigger included, takes
    // seconds here, and rows still being inserted at T would count against the drain). Not moved
    // forward past the insert: a jump of a minute expired every partition lease at once, and the
    // worker that renewed first took all sixteen, so one worker drained what two should (seen in
    // the runs' worker_id: 26,000-34,000 runs/s instead of both workers' rate).
    // T stays far from the schedules' next slot, which the tick materialises 15 min ahead.
    const n = Math.min(o.steadyRuns, o.schedules);
    const { rows: t } = await pool.query<{ stood: Date }>(
      `UPDATE sk_clock SET frozen_at = date_trunc('milliseconds', sk_now()), shift = interval '0' WHERE id = 1 RETURNING frozen_at AS stood`,
    );
    const stood = t[0].stood;
    const at = new Date(stood.getTime() + 1_000);
    await pool.query(
      `INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, origin, max_attempts)
       SELECT id, partition, $2::timestamptz - interval '1 day', $2, $2, 'pending', 'backfill', 6
       FROM schedules ORDER BY id LIMIT $1`,
      [n, at],
    );
    await runClockFrom(pool, stood);
    await waitFor("steady drain", () => drained(pool), 600_000, DRAIN_POLL_MS);
    // The drain's rate is from its first start to its last finish. Before the first start lies the
    // wait for the workers' next poll (up to the poll interval, 200 ms by default): latency, which
    // the spike reports, not throughput, and a seventh of a 1.4 s drain. Both are reported.
    const { rows: st } = await pool.query<{ secs: number; first: number; from_due: number; n: number }>(
      `SELECT extract(epoch FROM max(finished_at) - min(started_at))::float8 AS secs,
              extract(epoch FROM min(started_at) - $1::timestamptz)::float8 AS first,
              extract(epoch FROM max(finished_at) - $1::timestamptz)::float8 AS from_due, count(*)::int AS n
       FROM runs WHERE due_at = $1 AND origin = 'backfill'`,
      [at],
    );
    // Heartbeats' HOT share with the workers still running (ticking, polling, renewing partitions).
    const one = createPool(o.url, { max: 1, applicationName: "slotkeeper:bench-hot" });
    const heartbeatHot = await measureHeartbeatHot(one, createDb(one), 1000, 3, true).finally(() => one.end());
    stopRss();
    await stopAll(procs);
    return {
      heartbeatHot,
      materialise: mat,
      alertPassSecondsAtLeast,
      spike: {
        ...stats,
        ...server,
        check,
        statements,
        cpuPerRun,
        byWorker: byWorker.map((w) => ({ worker: w.worker, runs: w.runs, firstStartSeconds: Math.round(w.first * 1000) / 1000, lastStartSeconds: Math.round(w.last * 1000) / 1000 })),
        attemptsRows: extra[0].attempts, attemptTableRows: extra[0].attempt_rows, peakWorkerRssMb: spikeRss, startupPeakWorkerRssMb: startupPeakRssMb, databaseSizeMb: Math.round(Number(extra[0].size)), sweptRuns: swept[0].n },
      steady: {
        runs: st[0].n,
        seconds: Math.round(st[0].secs * 1000) / 1000,
        runsPerSecond: Math.round(st[0].n / st[0].secs),
        firstStartAfterSeconds: Math.round(st[0].first * 1000) / 1000,
        secondsFromDue: Math.round(st[0].from_due * 1000) / 1000,
        runsPerSecondFromDue: Math.round(st[0].n / st[0].from_due),
      },
    };
  } finally {
    stopRss();
    await stopAll(procs);
    await setClock(pool, null);
  }
}
