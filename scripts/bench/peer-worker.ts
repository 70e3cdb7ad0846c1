// One worker process of a peer queue — graphile-worker or pg-boss — with a no-op task that
// records each start in `peer_starts`, the peers' phase's oracle (scripts/bench/peers.ts).
// `node --import tsx scripts/bench/peer-worker.ts` with BENCH_PEER (graphile-worker | pg-boss),
// BENCH_DATABASE_URL, BENCH_WORKER, BENCH_BATCH, BENCH_POLL_MS; stops on SIGTERM.
import pg from "pg";
import { Logger, run, type Runner } from "graphile-worker";
import { PgBoss } from "pg-boss";
import { GRAPHILE_TUNING, PEER_APPLICATION_NAME, PEER_QUEUE, PGBOSS_TUNING, type PeerName } from "./peer-tuning";

const peer = process.env.BENCH_PEER as PeerName;
const url = process.env.BENCH_DATABASE_URL!;
const worker = process.env.BENCH_WORKER ?? String(process.pid);
const batch = Number(process.env.BENCH_BATCH ?? 500);
const pollMs = Number(process.env.BENCH_POLL_MS ?? 200);

/** The connection string with the phase's application_name, so the harness can see the workers' sessions. */
function named(u: string): string {
  const x = new URL(u);
  x.searchParams.set("application_name", PEER_APPLICATION_NAME);
  return x.toString();
}

// The recorder: starts are buffered and written in batches on a connection of its own (one
// statement per 50 ms at most), so recording costs the task nothing but an array push.
const recorder = new pg.Pool({ connectionString: url, max: 1, application_name: "slotkeeper:bench-peer-recorder" });
let jobs: number[] = [];
let claimedAt: Date[] = [];
let startedAt: Date[] = [];
let flushing: Promise<void> = Promise.resolve();

/** A start of job `n`: the peer's own claim timestamp (its database's now() when it locked the job) and now, as the task began. */
function record(n: number, claimed: Date): void {
  jobs.push(n);
  claimedAt.push(claimed);
  startedAt.push(new Date());
}

function flush(): Promise<void> {
  flushing = flushing.then(async () => {
    if (jobs.length === 0) return;
    const values = [jobs, claimedAt, startedAt, worker];
    jobs = [];
    claimedAt = [];
    startedAt = [];
    await recorder.query(
      `INSERT INTO peer_starts (job, claimed_at, started_at, worker)
       SELECT j, c, s, $4 FROM unnest($1::int[], $2::timestamptz[], $3::timestamptz[]) AS x(j, c, s)`,
      values,
    );
  });
  return flushing;
}
const flushTimer = setInterval(() => void flush().catch(fail), 50);

function fail(err: unknown): never {
  console.error(`peer worker ${peer}: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
}

async function startGraphile(): Promise<() => Promise<void>> {
  const logger = new Logger(() => (level, message) => {
    if (level === "error" || level === "warning") console.error(`graphile-worker ${level}: ${message}`);
  });
  const runner: Runner = await run({
    noHandleSignals: true,
    logger,
    taskList: {
      [PEER_QUEUE]: async (payload, helpers) => {
        record((payload as { n: number }).n, helpers.job.locked_at!);
      },
    },
    preset: {
      worker: {
        connectionString: named(url),
        pollInterval: pollMs,
        ...GRAPHILE_TUNING,
        // The local queue fetches (and locks) this many due jobs per statement, like Slotkeeper's claim batch.
        localQueue: { size: batch },
      },
    },
  });
  return () => runner.stop();
}

async function startPgBoss(): Promise<() => Promise<void>> {
  const boss = new PgBoss({
    connectionString: named(url),
    max: PGBOSS_TUNING.poolSize,
    // The harness created the schema and the queue; this process only works.
    migrate: false,
    supervise: false,
    schedule: false,
  });
  boss.on("error", (err) => console.error(`pg-boss error: ${err?.stack ?? err}`));
  await boss.start();
  await boss.work(
    PEER_QUEUE,
    {
      batchSize: batch,
      // pg-boss refuses a polling interval under 500 ms.
      pollingIntervalSeconds: Math.max(0.5, pollMs / 1000),
      localConcurrency: PGBOSS_TUNING.localConcurrency,
      burstWhenBatchFull: true,
      includeMetadata: true,
    },
    async (batchOfJobs) => {
      for (const j of batchOfJobs) record((j.data as { n: number }).n, j.startedOn);
    },
  );
  return () => boss.stop({ graceful: true, timeout: 10_000 });
}

async function main() {
  const stop = peer === "graphile-worker" ? await startGraphile() : peer === "pg-boss" ? await startPgBoss() : fail(new Error(`BENCH_PEER: unknown peer "${peer}"`));
  await recorder.query(`INSERT INTO peer_ready (worker) VALUES ($1)`, [worker]);
  let stopping = false;
  process.on("SIGTERM", () => {
    if (stopping) return;
    stopping = true;
    void (async () => {
      await stop();
      clearInterval(flushTimer);
      await flush();
      await recorder.end();
      process.exit(0);
    })().catch(fail);
  });
}

main().catch(fail);
