// The raw ceiling: the same spike through bare SQL (scripts/bench/raw-worker.ts), partition-aware and
// pipelined like Slotkeeper's workers (the ceiling) or the plain `FOR UPDATE SKIP LOCKED` claim (a labelled row).
import path from "node:path";
import type pg from "pg";
import { WORKER_LOADER } from "../../worker/node-flags";
import { countCpu, CPU_LEAD_MS, DRAIN_POLL_MS, sampleRss, startNode, stopAll, waitFor, type CpuPerRun } from "./procs";
import { RAW_INSERT, rawTableDdl, type RawMode } from "./raw-statements";
import { checkpointBeforePhase, checkRuns, markPhase, prepareSpikeTables, sincePhase, spikeStats, type RunsCheck, type SpikeStats } from "./stats";

export type RawOptions = {
  url: string;
  schedules: number;
  workers: number;
  batch: number;
  loopsPerWorker: number;
  /** `partitioned` (the ceiling, shaped like a worker) or `plain` (the plain `FOR UPDATE SKIP LOCKED` claim). */
  mode?: RawMode;
  partitions?: number;
};

export type RawReport = SpikeStats & { mode: RawMode; check: RunsCheck; peakWorkerRssMb: number[]; cpuPerRun: CpuPerRun };

/**
 * Load S rows due at one instant T (far enough ahead that the insert has committed and the workers
 * are polling), let W raw workers drain them, and measure from T.
 */
export async function runRawSpike(pool: pg.Pool, o: RawOptions): Promise<RawReport> {
  const mode = o.mode ?? "partitioned";
  const partitions = o.partitions ?? 16;
  for (const statement of rawTableDdl(mode)) await pool.query(statement);

  const procs = Array.from({ length: o.workers }, (_, i) =>
    // Loaded as a Slotkeeper worker is (WORKER_LOADER), so both sides' memory counts the same loader.
    startNode([...WORKER_LOADER, path.join("scripts", "bench", "raw-worker.ts")], {
      BENCH_DATABASE_URL: o.url,
      BENCH_BATCH: String(o.batch),
      BENCH_LOOPS: String(o.loopsPerWorker),
      BENCH_RAW_MODE: mode,
      BENCH_PARTITIONS: String(partitions),
      BENCH_WORKERS: String(o.workers),
      BENCH_WORKER_INDEX: String(i),
    }),
  );
  const stopRss = sampleRss(procs);
  try {
    await waitFor(
      "raw workers to connect",
      async () =>
        (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'slotkeeper:bench-raw'`)).rows[0].n >=
        // Each worker's claim loops and its finishing connections (raw-worker.ts).
        o.workers * (o.loopsPerWorker + (mode === "partitioned" ? 1 : o.loopsPerWorker)),
      60_000,
    );
    // Lead time: the insert (~100,000 rows/s here), the VACUUM ANALYZE and the checkpoint after it, so every row is
    // visible and the checkpoint over before T.
    const leadMs = 7000 + Math.ceil(o.schedules / 40);
    const { rows } = await pool.query<{ due: Date }>(`SELECT now() + make_interval(secs => $1::float8 / 1000) AS due`, [leadMs]);
    const due = rows[0].due;
    await pool.query(RAW_INSERT, [o.schedules, due, partitions]);
    await prepareSpikeTables(pool, ["raw_runs"]);
    await checkpointBeforePhase(pool);
    const mark = await markPhase(pool);
    const { rows: late } = await pool.query<{ late: boolean; wait_ms: number }>(
      `SELECT now() > $1 AS late, greatest(0, extract(epoch FROM $1::timestamptz - clock_timestamp()) * 1000 - ${CPU_LEAD_MS})::float8 AS wait_ms`,
      [due],
    );
    if (late[0].late) console.error("bench: raw rows committed (and checkpointed) after their due instant; lateness is inflated");
    // CPU is counted from just before the due instant: the lead time is seconds of empty polls.
    await new Promise((r) => setTimeout(r, late[0].wait_ms));
    const cpu = countCpu(procs);
    await waitFor("raw spike to drain", async () => (await pool.query(`SELECT 1 FROM raw_runs WHERE state = 'pending' LIMIT 1`)).rowCount === 0, 600_000, DRAIN_POLL_MS);
    await waitFor("raw leases to finish", async () => (await pool.query(`SELECT 1 FROM raw_runs WHERE state = 'leased' LIMIT 1`)).rowCount === 0, 60_000, DRAIN_POLL_MS);
    const stats = await spikeStats(pool, `SELECT started_at, finished_at, due_at FROM raw_runs`, due);
    const cpuPerRun = cpu(stats.runs);
    const server = await sincePhase(pool, mark, stats.runs);
    const check = await checkRuns(pool, `SELECT started_at, state FROM raw_runs`, o.schedules);
    stopRss();
    return { mode, ...stats, ...server, check, cpuPerRun, peakWorkerRssMb: procs.map((p) => Math.round(p.peakRssMb)) };
  } finally {
    stopRss();
    await stopAll(procs);
    await pool.query(`DROP TABLE IF EXISTS raw_runs`);
  }
}
