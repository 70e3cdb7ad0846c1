// The ceiling: bare SQL and a no-op "handler", no Slotkeeper code. `node --import tsx
// scripts/bench/raw-worker.ts` with BENCH_DATABASE_URL, BENCH_BATCH, BENCH_LOOPS, BENCH_RAW_MODE;
// stops on SIGTERM.
//
// Two modes, each a row of the report:
// - `partitioned` (the ceiling ratios are quoted against): shaped like a Slotkeeper worker. It holds
//   the partitions p with p % BENCH_WORKERS = BENCH_WORKER_INDEX, claims one partition per
//   statement in rotating order until the batch is full (lib/runs/claim/index.ts), and pipelines:
//   each claim loop hands its rows to one flusher that writes the finishes in one statement while
//   the loop claims again (worker/runner.ts `flush`), over loops + 1 connections.
// - `plain`: the plain `FOR UPDATE SKIP LOCKED` claim, then its finish, in turn, in every loop.
import pg from "pg";
import { RAW_CLAIM, RAW_CLAIM_IN_PARTITION, RAW_FINISH, RAW_FINISH_SESSION_OPTIONS } from "./raw-statements";

const url = process.env.BENCH_DATABASE_URL!;
const batch = Number(process.env.BENCH_BATCH ?? 100);
const loops = Number(process.env.BENCH_LOOPS ?? 2);
const mode = process.env.BENCH_RAW_MODE === "plain" ? "plain" : "partitioned";
const partitionCount = Number(process.env.BENCH_PARTITIONS ?? 16);
const workers = Number(process.env.BENCH_WORKERS ?? 1);
const workerIndex = Number(process.env.BENCH_WORKER_INDEX ?? 0);
const owner = `raw-${process.pid}`;
type Row = { id: string; fencing_token: number };

// Claims on one pool (a connection per loop), finishes on another with Slotkeeper's session
// settings (RAW_FINISH has why): one connection for the partitioned mode's single flusher, one per
// loop for the plain mode, whose loops finish in turn after their claims. So as many statements run
// at once as on a single pool of loops (+ 1) connections.
const appName = "slotkeeper:bench-raw";
const pool = new pg.Pool({ connectionString: url, max: loops, application_name: appName });
const finishers = mode === "partitioned" ? 1 : loops;
const finisher = new pg.Pool({ connectionString: url, max: finishers, application_name: appName, options: RAW_FINISH_SESSION_OPTIONS });
const finish = (rows: Row[]) => finisher.query({ ...RAW_FINISH, values: [rows.map((r) => r.id), rows.map((r) => r.fencing_token), owner] });

let stopping = false;
process.on("SIGTERM", () => (stopping = true));
const idle = () => new Promise((r) => setTimeout(r, 20));

const held = Array.from({ length: partitionCount }, (_, p) => p).filter((p) => p % workers === workerIndex);
let rotation = 0;
const finishQueue: Row[] = [];
let flushing: Promise<void> | null = null;
// One finish statement at a time, as the worker's runner writes (FINISH_BATCH_MAX there).
const FLUSH_MAX = 2000;

function flush(): Promise<void> {
  if (flushing || finishQueue.length === 0) return flushing ?? Promise.resolve();
  const rows = finishQueue.splice(0, FLUSH_MAX);
  flushing = finish(rows).then(() => {
      flushing = null;
      if (finishQueue.length > 0) setImmediate(() => void flush());
    });
  return flushing;
}

/** The plain `FOR UPDATE SKIP LOCKED` claim, then its finish, in turn: returns how many runs it claimed. */
async function claimThenFinish(): Promise<number> {
  const { rows } = await pool.query<Row>({ ...RAW_CLAIM, values: [owner, batch] });
  if (rows.length > 0) await finish(rows);
  return rows.length;
}

/**
 * One batch from the held partitions, one partition per statement, starting at the next in
 * rotation and taking as many partitions as it takes to fill it; each statement's rows join the
 * finish queue at once (the no-op handler is over at once) and the claims go on while they flush.
 */
async function claimInPartitions(): Promise<number> {
  const start = rotation++ % Math.max(1, held.length);
  const order = [...held.slice(start), ...held.slice(0, start)];
  let got = 0;
  for (const p of order) {
    if (got >= batch) break;
    const { rows } = await pool.query<Row>({ ...RAW_CLAIM_IN_PARTITION, values: [owner, batch - got, p] });
    got += rows.length;
    finishQueue.push(...rows);
    setImmediate(() => void flush());
  }
  return got;
}

/** A claim loop: batches until SIGTERM, a short wait after an empty one; then what is left to finish. */
async function claimLoop(claimBatch: () => Promise<number>) {
  while (!stopping) if ((await claimBatch()) === 0) await idle();
  while (flushing || finishQueue.length > 0) await flush();
}

/** Open the finishing connections before the due instant, as the claim loops' polls open theirs. */
async function openFinishers() {
  const clients = await Promise.all(Array.from({ length: finishers }, () => finisher.connect()));
  for (const c of clients) c.release();
}

openFinishers()
  .then(() => Promise.all(Array.from({ length: loops }, () => claimLoop(mode === "plain" ? claimThenFinish : claimInPartitions))))
  .then(() => Promise.all([pool.end(), finisher.end()]))
  .then(() => process.exit(0))
  .catch((err) => {
    console.error(`raw worker: ${err?.stack ?? err}`);
    process.exit(1);
  });
