// The peers' spike: N jobs due at one instant in graphile-worker and in pg-boss, each on a fresh
// database, drained by W worker processes (scripts/bench/peer-worker.ts) with a no-op task, and
// measured with the same SQL as Slotkeeper's spike (`spikeStats`) over the starts the tasks record.
import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { makeWorkerUtils, runMigrations } from "graphile-worker";
import { PgBoss } from "pg-boss";
import { GRAPHILE_TUNING, PEER_QUEUE, PEERS, PGBOSS_TUNING, type PeerName } from "./peer-tuning";
import { countCpu, CPU_LEAD_MS, DRAIN_POLL_MS, sampleRss, startNode, stopAll, waitFor, type CpuPerRun } from "./procs";
import { checkpointBeforePhase, markPhase, sincePhase, spikeStats } from "./stats";

export type PeerOptions = {
  /** An empty database of the peer's own. */
  url: string;
  jobs: number;
  workers: number;
  /** Jobs fetched per claim statement (graphile-worker's local queue, pg-boss's batchSize). */
  batch: number;
  pollIntervalMs: number;
};

/** Start figures of one measure, as Slotkeeper's spike reports them. */
type Starts = {
  lastStartedAfterSeconds: number;
  latenessSeconds: { p50: number; p99: number; max: number };
  claimsPerSecond: number;
};

export type PeerReport = Starts & {
  peer: PeerName;
  version: string;
  tuning: Record<string, unknown>;
  /** Jobs loaded, and how long the bulk insert took. */
  jobs: number;
  loadSeconds: number;
  /** False when the insert (and the checkpoint after it) ended after the due instant: lateness is then inflated. */
  loadedBeforeDue: boolean;
  /** The same figures from the instant each task began in Node (after waiting in a local queue or batch), not from the peer's claim. */
  taskStart: Starts;
  /** Starts recorded, jobs among 1..N started at least once, and starts beyond the first. */
  recordedStarts: number;
  jobsStarted: number;
  repeatedStarts: number;
  byWorker: { worker: string; runs: number; lastStartSeconds: number }[];
  checkpointsDuring: number;
  walMb: number;
  walBytesPerRun: number;
  cpuPerRun: CpuPerRun;
  peakWorkerRssMb: number[];
};

// Neither package exports its package.json, so the installed version is read from the file.
const versionOf = (pkg: string): string =>
  (JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, "..", "..", "node_modules", pkg, "package.json"), "utf8")) as { version: string }).version;

/** The jobs' key n runs 1..N; loaded in chunks so no one statement carries hundreds of thousands of parameters. */
const LOAD_CHUNK = 10_000;

async function createOracleTables(pool: pg.Pool): Promise<void> {
  // No key on job: a start recorded twice must stay visible.
  await pool.query(`CREATE TABLE peer_starts (job int NOT NULL, claimed_at timestamptz NOT NULL, started_at timestamptz NOT NULL, worker text NOT NULL)`);
  await pool.query(`CREATE TABLE peer_ready (worker text PRIMARY KEY)`);
}

/** Install the peer's schema (and pg-boss's queue); returns a loader of jobs due at one instant and its closer. */
async function installPeer(peer: PeerName, url: string): Promise<{ load: (jobs: number, due: Date) => Promise<void>; close: () => Promise<void> }> {
  if (peer === "graphile-worker") {
    await runMigrations({ connectionString: url });
    const utils = await makeWorkerUtils({ connectionString: url });
    return {
      load: async (jobs, due) => {
        for (let from = 1; from <= jobs; from += LOAD_CHUNK) {
          const specs = Array.from({ length: Math.min(LOAD_CHUNK, jobs - from + 1) }, (_, i) => ({ identifier: PEER_QUEUE, payload: { n: from + i }, runAt: due }));
          await utils.addJobs(specs);
        }
      },
      close: async () => {
        await utils.release();
      },
    };
  }
  const boss = new PgBoss({ connectionString: url, supervise: false, schedule: false });
  boss.on("error", (err) => console.error(`bench: pg-boss: ${err?.stack ?? err}`));
  await boss.start();
  await boss.createQueue(PEER_QUEUE);
  return {
    load: async (jobs, due) => {
      for (let from = 1; from <= jobs; from += LOAD_CHUNK) {
        const batch = Array.from({ length: Math.min(LOAD_CHUNK, jobs - from + 1) }, (_, i) => ({ data: { n: from + i }, startAfter: due }));
        await boss.insert(PEER_QUEUE, batch);
      }
    },
    close: () => boss.stop({ graceful: false }),
  };
}

/** True while the peer still has a job of the phase not finished (graphile-worker deletes a completed job; pg-boss marks it completed). */
async function peerBusy(peer: PeerName, pool: pg.Pool): Promise<boolean> {
  const sql =
    peer === "graphile-worker"
      ? `SELECT 1 FROM graphile_worker._private_jobs LIMIT 1`
      : `SELECT 1 FROM pgboss.job WHERE name = '${PEER_QUEUE}' AND state < 'completed' LIMIT 1`;
  return ((await pool.query(sql)).rowCount ?? 0) > 0;
}

const startsOf = (s: Awaited<ReturnType<typeof spikeStats>>): Starts => ({
  lastStartedAfterSeconds: s.lastStartedAfterSeconds,
  latenessSeconds: s.latenessSeconds,
  claimsPerSecond: s.claimsPerSecond,
});

/**
 * Load `jobs` jobs due at one instant into `peer` on the empty database `o.url`, drain them with
 * W worker processes, and measure from the due instant. The primary figures read each job's start
 * as the peer's database recorded its claim (graphile-worker's `locked_at`, pg-boss's
 * `started_on`), as Slotkeeper's `runs.started_at` is its claim's instant; `taskStart` reads when
 * the task itself began. Leaves `peer_starts` in the database for the caller to read.
 */
export async function runPeer(peer: PeerName, o: PeerOptions): Promise<PeerReport> {
  const pool = new pg.Pool({ connectionString: o.url, max: 2, application_name: "slotkeeper:bench-peers" });
  // pool.end() resolves before its sockets have closed, so the DROP DATABASE … WITH (FORCE) right
  // after can still reach one (57P01); anything else is worth a line.
  pool.on("error", (err) => {
    if ((err as { code?: string }).code !== "57P01") console.error(`bench: ${peer}: idle connection: ${err.message}`);
  });
  const procs: ReturnType<typeof startNode>[] = [];
  let stopRss = () => {};
  try {
    await createOracleTables(pool);
    const installed = await installPeer(peer, o.url);
    try {
      for (let i = 0; i < o.workers; i++) {
        procs.push(
          // `--import tsx`: pg-boss is an ES module only.
          startNode(["--import", "tsx", path.join("scripts", "bench", "peer-worker.ts")], {
            BENCH_PEER: peer,
            BENCH_DATABASE_URL: o.url,
            BENCH_WORKER: `${peer}-${i}`,
            BENCH_BATCH: String(o.batch),
            BENCH_POLL_MS: String(o.pollIntervalMs),
          }),
        );
      }
      stopRss = sampleRss(procs);
      const exited = Promise.race(procs.map((p) => p.exited.then((code) => Promise.reject(new Error(`bench: a ${peer} worker exited (code ${code})`)))));
      exited.catch(() => {});
      const alive = async () => {
        await Promise.race([exited, Promise.resolve()]);
      };
      await waitFor(
        `${peer} workers to start`,
        async () => {
          await alive();
          return (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM peer_ready`)).rows[0].n >= o.workers;
        },
        60_000,
      );
      // Lead time for the bulk insert, the VACUUM ANALYZE and the checkpoint after it, so every job
      // is in before it is due: graphile-worker's addJobs and pg-boss's insert ran at 15,000-45,000
      // jobs/s here, depending on the machine's load.
      const leadMs = 10_000 + Math.ceil(o.jobs / 8);
      const { rows } = await pool.query<{ due: Date }>(`SELECT date_trunc('milliseconds', now() + make_interval(secs => $1::float8 / 1000)) AS due`, [leadMs]);
      const due = rows[0].due;
      const loadStarted = performance.now();
      await installed.load(o.jobs, due);
      const loadSeconds = (performance.now() - loadStarted) / 1000;
      // As Slotkeeper's spike and the raw phase do after loading: the planner sees the jobs (a
      // server's autovacuum would have analysed them in the minutes before a top of the hour).
      await pool.query(`VACUUM ANALYZE`);
      await checkpointBeforePhase(pool);
      const mark = await markPhase(pool);
      const { rows: late } = await pool.query<{ late: boolean; wait_ms: number }>(
        `SELECT now() > $1 AS late, greatest(0, extract(epoch FROM $1::timestamptz - clock_timestamp()) * 1000 - ${CPU_LEAD_MS})::float8 AS wait_ms`,
        [due],
      );
      if (late[0].late) console.error(`bench: ${peer}'s jobs were loaded (and checkpointed) after their due instant; its lateness is inflated`);
      await new Promise((r) => setTimeout(r, late[0].wait_ms));
      const cpu = countCpu(procs);
      await waitFor(
        `${peer}'s spike to drain`,
        async () => {
          await alive();
          return (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM peer_starts`)).rows[0].n >= o.jobs && !(await peerBusy(peer, pool));
        },
        900_000,
        DRAIN_POLL_MS,
      );
      stopRss();
      const source = (column: string) => `SELECT ${column} AS started_at, NULL::timestamptz AS finished_at, $1::timestamptz AS due_at FROM peer_starts`;
      const claimed = await spikeStats(pool, source("claimed_at"), due);
      const task = await spikeStats(pool, source("started_at"), due);
      const cpuPerRun = cpu(claimed.runs);
      const server = await sincePhase(pool, mark, claimed.runs);
      const { rows: counts } = await pool.query<{ recorded: number; started: number }>(
        `SELECT count(*)::int AS recorded, count(DISTINCT job) FILTER (WHERE job BETWEEN 1 AND $1)::int AS started FROM peer_starts`,
        [o.jobs],
      );
      const { rows: byWorker } = await pool.query<{ worker: string; runs: number; last: number }>(
        `SELECT worker, count(*)::int AS runs, extract(epoch FROM max(claimed_at) - $1::timestamptz)::float8 AS last FROM peer_starts GROUP BY worker ORDER BY worker`,
        [due],
      );
      await stopAll(procs);
      return {
        peer,
        version: versionOf(peer),
        tuning: peer === "graphile-worker" ? { ...GRAPHILE_TUNING, pollInterval: o.pollIntervalMs, localQueueSize: o.batch } : { ...PGBOSS_TUNING, batchSize: o.batch, pollingIntervalSeconds: Math.max(0.5, o.pollIntervalMs / 1000), burstWhenBatchFull: true },
        jobs: o.jobs,
        loadSeconds: Math.round(loadSeconds * 100) / 100,
        loadedBeforeDue: !late[0].late,
        ...startsOf(claimed),
        taskStart: startsOf(task),
        recordedStarts: counts[0].recorded,
        jobsStarted: counts[0].started,
        repeatedStarts: counts[0].recorded - counts[0].started,
        byWorker: byWorker.map((w) => ({ worker: w.worker, runs: w.runs, lastStartSeconds: Math.round(w.last * 1000) / 1000 })),
        ...server,
        cpuPerRun,
        peakWorkerRssMb: procs.map((p) => Math.round(p.peakRssMb)),
      };
    } finally {
      await installed.close();
    }
  } finally {
    stopRss();
    await stopAll(procs);
    await pool.end();
  }
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Each peer on a fresh database `<prefix>_<peer>` on the server of `serverUrl`, dropped after (unless `keep`). */
export async function runPeers(serverUrl: string, prefix: string, o: Omit<PeerOptions, "url">, keep = false): Promise<Record<PeerName, PeerReport>> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  const out: Partial<Record<PeerName, PeerReport>> = {};
  try {
    for (const peer of PEERS) {
      const name = `${prefix}_${peer.replace(/-/g, "")}`;
      await admin.query(`CREATE DATABASE ${name}`);
      try {
        out[peer] = await runPeer(peer, { ...o, url: withDatabase(serverUrl, name) });
      } finally {
        if (!keep) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      }
    }
  } finally {
    await admin.end();
  }
  return out as Record<PeerName, PeerReport>;
}
