// `node --import tsx scripts/bench/db-cost.ts [S] [batch]`: the database's CPU per run of the spike's
// statements, Slotkeeper's claim and finish against the raw ceiling's, without workers. Each side
// drains S runs due at one instant (scratch databases on DATABASE_URL's server, which must run on
// this machine) in three shapes:
// - `alone`: one connection, a batch claimed, then finished, in turn;
// - `twoInTurn`: two such loops at once, each on half the partitions;
// - `twoPipelined`: two loops at once, each claiming on while its finishes are written on a
//   connection of their own (at most FINISH_BATCH_MAX a statement), as a worker does.
// No handler, no lease renewal and no periodic pass runs: what is left is what each statement
// costs and what running them side by side adds. docs/benchmarks.md quotes its output.
import os from "node:os";
import pg from "pg";
import { createDb, createPool, type Db } from "../../lib/db/client";
import { claimRunsDetailed } from "../../lib/runs/claim";
import { finishRuns, type RunResult } from "../../lib/runs/finish";
import { runClockFrom } from "../../lib/testing/clock";
import { FINISH_BATCH_MAX } from "../../worker/runner";
import { countCpu } from "./procs";
import { rawTableDdl, RAW_CLAIM_IN_PARTITION, RAW_FINISH, RAW_FINISH_SESSION_OPTIONS, RAW_INSERT } from "./raw-statements";
import { runScript, withScratchDatabase } from "./scratch";
import { BENCH_DUE, materialise } from "./spike";

const PARTITIONS = 16;
type Shape = "alone" | "twoInTurn" | "twoPipelined";
const SHAPES: Shape[] = ["alone", "twoInTurn", "twoPipelined"];
/** How many claim loops a shape runs at once. */
const loopsOf = (shape: Shape) => (shape === "alone" ? 1 : 2);
type Cost = { runs: number; seconds: number; databaseMicros: number | null; clientMicros: number };

/** One loop's two steps: claim up to n due runs in its partitions (a batch to finish), and finish a batch. */
type Side<B> = { claim: (loop: number, n: number) => Promise<B[]>; finish: (loop: number, batch: B[]) => Promise<unknown> };

/** Drain with `loops` loops in the given shape; CPU per run from /proc (the database's processes, this one's). */
async function drain<B>(side: Side<B>, shape: Shape, batch: number): Promise<Cost> {
  const loops = loopsOf(shape);
  const cpu = countCpu([]);
  const client = process.cpuUsage();
  const started = performance.now();
  let runs = 0;
  await Promise.all(
    Array.from({ length: loops }, async (_, loop) => {
      const queue: B[] = [];
      let flushing: Promise<void> | null = null;
      const flush = (): Promise<void> => {
        if (flushing || queue.length === 0) return flushing ?? Promise.resolve();
        flushing = side.finish(loop, queue.splice(0, FINISH_BATCH_MAX)).then(() => {
          flushing = null;
          void flush();
        });
        return flushing;
      };
      for (;;) {
        const claimed = await side.claim(loop, batch);
        if (claimed.length === 0) break;
        runs += claimed.length;
        if (shape === "twoPipelined") {
          queue.push(...claimed);
          void flush();
        } else await side.finish(loop, claimed);
      }
      while (flushing || queue.length > 0) await (flushing ?? flush());
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(client);
  return { runs, seconds: Math.round(seconds * 100) / 100, databaseMicros: cpu(runs).databaseMicros, clientMicros: Math.round((used.user + used.system) / runs * 10) / 10 };
}

const partitionsOf = (loop: number, loops: number) => Array.from({ length: PARTITIONS }, (_, p) => p).filter((p) => p % loops === loop);

/** Slotkeeper's claim (the by-handler claim a worker uses) and its finish of successes. */
async function slotkeeper(url: string, shape: Shape, batch: number): Promise<Cost> {
  const loops = loopsOf(shape);
  // A claiming and a finishing connection per loop, opened before the clock starts.
  const dbs: Db[] = [];
  const pools = Array.from({ length: loops }, () => createPool(url, { max: 2, applicationName: "slotkeeper:bench-db-cost" }));
  for (const p of pools) {
    const held = await Promise.all([p.connect(), p.connect()]);
    held.forEach((c) => c.release());
    dbs.push(createDb(p));
  }
  try {
    return await drain<RunResult>(
      {
        claim: async (loop, n) => {
          const { claimed } = await claimRunsDetailed(dbs[loop], { workerId: `cost-${loop}`, partitions: partitionsOf(loop, loops), limit: n, rescueExpired: false, checkExclusive: false, handlers: ["noop"] });
          return claimed.map((r) => ({ id: r.id, scheduleId: r.scheduleId, queueTid: r.queueTid, attempt: r.attempt, outcome: "succeeded", durationMs: 0, output: undefined }));
        },
        finish: (loop, results) => finishRuns(dbs[loop], `cost-${loop}`, results),
      },
      shape,
      batch,
    );
  } finally {
    await Promise.all(pools.map((p) => p.end()));
  }
}

/** The ceiling's claim in one partition at a time (as raw-worker.ts's partitioned mode) and its finish. */
async function raw(url: string, admin: pg.Pool, shape: Shape, batch: number, s: number): Promise<Cost> {
  for (const ddl of rawTableDdl("partitioned")) await admin.query(ddl);
  // Due a second ago (the server is on this machine, so on this clock).
  await admin.query(RAW_INSERT, [s, new Date(Date.now() - 1000), PARTITIONS]);
  await admin.query(`VACUUM ANALYZE raw_runs`);
  await admin.query(`CHECKPOINT`);
  const loops = loopsOf(shape);
  const claimers = Array.from({ length: loops }, () => new pg.Client({ connectionString: url }));
  const finishers = Array.from({ length: loops }, () => new pg.Client({ connectionString: url, options: RAW_FINISH_SESSION_OPTIONS }));
  await Promise.all([...claimers, ...finishers].map((c) => c.connect()));
  type Row = { id: string; fencing_token: number };
  try {
    return await drain<Row>(
      {
        claim: async (loop, n) => {
          const got: Row[] = [];
          for (const p of partitionsOf(loop, loops)) {
            if (got.length >= n) break;
            const { rows } = await claimers[loop].query<Row>({ ...RAW_CLAIM_IN_PARTITION, values: [`raw-${loop}`, n - got.length, p] });
            got.push(...rows);
          }
          return got;
        },
        finish: (loop, rows) => finishers[loop].query({ ...RAW_FINISH, values: [rows.map((r) => r.id), rows.map((r) => r.fencing_token), `raw-${loop}`] }),
      },
      shape,
      batch,
    );
  } finally {
    await Promise.all([...claimers, ...finishers].map((c) => c.end()));
  }
}

/** A drain counts only if it started and finished every run once: read from the rows themselves. */
async function assertDrained(pool: pg.Pool, what: string, query: string, params: unknown[], s: number): Promise<void> {
  const { rows } = await pool.query<{ n: number; done: number }>(query, params);
  if (rows[0].n !== s || rows[0].done !== s) throw new Error(`db-cost: ${what} left ${s - rows[0].done} of ${s} runs unfinished (${rows[0].n} rows)`);
}

type DbCostReport = { cpus: number; loadAverage: number[]; schedules: number; batch: number; slotkeeper: Record<Shape, Cost>; raw: Record<Shape, Cost> };

/** Every shape on both sides, each on S runs due at one instant (a scratch database per shape). */
async function measureDbCost(s: number, batch: number): Promise<DbCostReport> {
  const out = { slotkeeper: {} as Record<Shape, Cost>, raw: {} as Record<Shape, Cost> };
  for (const shape of SHAPES) {
    await withScratchDatabase("sk_bench_cost", { poolMax: 1, partitions: PARTITIONS }, async ({ url, pool, db }) => {
      await materialise(pool, db, { schedules: s, partitions: PARTITIONS });
      await runClockFrom(pool, new Date(BENCH_DUE.getTime() + 1000));
      out.slotkeeper[shape] = await slotkeeper(url, shape, batch);
      await assertDrained(pool, `slotkeeper ${shape}`, `SELECT count(*)::int AS n, count(*) FILTER (WHERE state = 'done' AND started_at IS NOT NULL)::int AS done FROM runs WHERE scheduled_for = $1`, [BENCH_DUE], s);
      out.raw[shape] = await raw(url, pool, shape, batch, s);
      await assertDrained(pool, `raw ${shape}`, `SELECT count(*)::int AS n, count(*) FILTER (WHERE state = 'done' AND fencing_token = 1)::int AS done FROM raw_runs`, [], s);
    });
  }
  return { cpus: os.cpus().length, loadAverage: os.loadavg(), schedules: s, batch, ...out };
}

runScript(async () => {
  console.log(JSON.stringify(await measureDbCost(Number(process.argv[2] ?? 400_000), Number(process.argv[3] ?? 500)), null, 2));
});
