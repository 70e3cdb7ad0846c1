// `npm run bench [-- --schedules S --workers W --batch B --partitions P --steady N --quick]`
// Starts from an empty database (a fresh `sk_bench_<ts>` on DATABASE_URL's server, or on the
// embedded one), runs the raw ceiling, Slotkeeper's spike and a steady drain, the raw ceiling
// again, prints one JSON report and drops the database. A benchmark, not a test: numbers depend on the machine and load.
import os from "node:os";
import { parseArgs } from "node:util";
import pg from "pg";
import { loadConfig } from "../lib/config";
import { createDb, createPool } from "../lib/db/client";
import { openDatabase } from "../lib/db/connect";
import { migrateDatabase } from "../lib/db/migrate";
import { setPartitionCount } from "../lib/partitions/count";
import { runRawSpike } from "./bench/raw";
import { runSpike } from "./bench/spike";

const { values: args } = parseArgs({
  options: {
    schedules: { type: "string" },
    workers: { type: "string" },
    batch: { type: "string" },
    partitions: { type: "string" },
    concurrency: { type: "string" },
    poll: { type: "string" },
    steady: { type: "string" },
    quick: { type: "boolean", default: false },
    "skip-raw": { type: "boolean", default: false },
    "raw-only": { type: "boolean", default: false },
    alerts: { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
  },
});

const num = (v: string | undefined, d: number) => (v === undefined ? d : Number.parseInt(v, 10));
const quick = args.quick === true;
const opts = {
  schedules: num(args.schedules, quick ? 20_000 : 400_000),
  // Two cores: PostgreSQL needs one of them; two worker processes keep the other busy.
  workers: num(args.workers, Math.max(2, Math.min(4, os.cpus().length))),
  batch: num(args.batch, 500),
  partitions: num(args.partitions, 16),
  concurrency: num(args.concurrency, 1000),
  pollIntervalMs: num(args.poll, 200),
  steadyRuns: num(args.steady, quick ? 20_000 : 50_000),
  alerts: args.alerts === true,
};

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function main() {
  const config = loadConfig();
  const server = await openDatabase(config);
  const name = `sk_bench_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = withDatabase(server.url, name);
  const pool = createPool(url, { max: 4, applicationName: "slotkeeper:bench" });
  const started = Date.now();
  try {
    await migrateDatabase(url);
    const db = createDb(pool);
    await setPartitionCount(db, opts.partitions);
    const rawOptions = { url, schedules: opts.schedules, workers: opts.workers, batch: opts.batch, loopsPerWorker: 2 };
    const raw = args["skip-raw"] ? null : await runRawSpike(pool, rawOptions);
    if (args["raw-only"]) {
      console.log(JSON.stringify({ options: opts, raw, loadAverage: os.loadavg() }, null, 2));
      return;
    }
    const sk = await runSpike(pool, db, { url, ...opts });
    // The ceiling again, after ours: this machine's speed drifts by a fifth or more within minutes
    // (raw alone: 39,000-54,000 starts/s in one hour), so ours is compared with the mean of the
    // ceiling measured on either side of it rather than with one measurement minutes earlier.
    const rawAfter = raw ? await runRawSpike(pool, rawOptions) : null;
    const ceiling = raw && rawAfter ? (raw.claimsPerSecond + rawAfter.claimsPerSecond) / 2 : null;
    const share = (x: number) => Math.round((sk.spike.claimsPerSecond / x) * 1000) / 1000;
    const report = {
      machine: { cpus: os.cpus().length, loadAverage: os.loadavg().map((x) => Math.round(x * 100) / 100), node: process.version },
      options: { ...opts, quick },
      materialise: sk.materialise,
      alertPassSecondsAtLeast: sk.alertPassSecondsAtLeast,
      spike: sk.spike,
      raw,
      rawAfter,
      ratio: raw && rawAfter && ceiling ? { startsPerSecond: share(ceiling), ofRawBefore: share(raw.claimsPerSecond), ofRawAfter: share(rawAfter.claimsPerSecond) } : null,
      steady: sk.steady,
      heartbeatHot: sk.heartbeatHot,
      targets: {
        spikeAllStartedWithin10s: sk.spike.lastStartedAfterSeconds <= 10,
        startsAtLeast85PercentOfRaw: ceiling ? sk.spike.claimsPerSecond >= 0.85 * ceiling : null,
        steadyAtLeast35000PerSecond: sk.steady.runsPerSecond >= 35_000,
        workerRssUnder200Mb: sk.spike.peakWorkerRssMb.every((m) => m < 200),
        attemptHistoryComplete: sk.spike.attemptsRows >= sk.spike.runs,
        heartbeatsAreHot: sk.heartbeatHot.hotRatio >= 0.9,
      },
      totalSeconds: Math.round((Date.now() - started) / 1000),
    };
    console.log(JSON.stringify(report, null, 2));
  } finally {
    await pool.end();
    if (!args.keep) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
    await server.stop();
  }
}

main().catch((err) => {
  console.error(`bench: ${err?.stack ?? err}`);
  process.exit(1);
});
