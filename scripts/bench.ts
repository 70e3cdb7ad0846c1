// `npm run bench [-- --schedules S --workers W --batch B --partitions P --steady N --quick --peers --handlers 2 --hosts H]`
// `npm run bench -- --fleet [--fleet-schedules N --fleet-steady-seconds T --fleet-readers R --fleet-reader-pace-ms P]` (scripts/bench/fleet.ts)
// `npm run bench -- --alerts-measure [--alerts-schedules N]` (scripts/bench/alerts-measure.ts)
// Starts from an empty database (a fresh `sk_bench_<ts>` on DATABASE_URL's server, or on the
// embedded one), runs the raw ceiling (partition-aware and pipelined, then the plain
// `FOR UPDATE SKIP LOCKED` claim as a labelled second row), Slotkeeper's spike and a steady drain, the raw ceiling
// again — and with --peers the same spike in graphile-worker and pg-boss, each on a fresh
// database of its own; with --handlers 2 also the spike split over two handlers whose workers
// serve one each, on a database of its own, between the two ceilings — prints one JSON report and drops the databases. A benchmark, not a test: numbers depend on the machine and load.
import os from "node:os";
import { parseArgs } from "node:util";
import pg from "pg";
import { LIVE_REFRESH_MS } from "../lib/client/api";
import { loadConfig } from "../lib/config";
import { createDb, createPool } from "../lib/db/client";
import { openDatabase } from "../lib/db/connect";
import { migrateDatabase } from "../lib/db/migrate";
import { setPartitionCount } from "../lib/partitions/count";
import { createHosts, startHostsDatabase, type Hosts } from "../lib/testing/hosts";
import { measureAlerts } from "./bench/alerts-measure";
import { runPeers } from "./bench/peers";
import { runFleet } from "./bench/fleet";
import { runRawSpike } from "./bench/raw";
import { ceilingRatios, startsMeetTarget } from "./bench/ratio";
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
    peers: { type: "boolean", default: false },
    handlers: { type: "string" },
    hosts: { type: "string" },
    fleet: { type: "boolean", default: false },
    "fleet-schedules": { type: "string" },
    "fleet-steady-seconds": { type: "string" },
    "fleet-readers": { type: "string" },
    "fleet-reader-pace-ms": { type: "string" },
    "alerts-measure": { type: "boolean", default: false },
    "alerts-schedules": { type: "string" },
  },
});

const num = (v: string | undefined, d: number) => (v === undefined ? d : Number.parseInt(v, 10));
const quick = args.quick === true;
const hostCount = num(args.hosts, 0);
const opts = {
  schedules: num(args.schedules, quick ? 20_000 : 400_000),
  // Two cores: PostgreSQL needs one of them; two worker processes keep the other busy.
  workers: num(args.workers, hostCount > 0 ? hostCount : Math.max(2, Math.min(4, os.cpus().length))),
  batch: num(args.batch, 500),
  partitions: num(args.partitions, 16),
  concurrency: num(args.concurrency, 1000),
  pollIntervalMs: num(args.poll, 200),
  steadyRuns: num(args.steady, quick ? 20_000 : 50_000),
  alerts: args.alerts === true,
  hostCount,
};
const handlers = num(args.handlers, 1);
if (handlers !== 1 && handlers !== 2) throw new Error("--handlers: 1 or 2");

/** This machine as the report gives it: cores, load average (1, 5, 15 min), Node. */
const machine = () => ({ cpus: os.cpus().length, loadAverage: os.loadavg().map((x) => Math.round(x * 100) / 100), node: process.version });

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

type StartFigures = { lastStartedAfterSeconds: number; latenessSeconds: { p50: number; p99: number }; claimsPerSecond: number };

/** Slotkeeper's spike and each peer's, one line each: the figures docs/benchmarks.md tabulates. */
function sideBySide(spike: StartFigures, peers: Record<string, StartFigures & { jobsStarted: number }>) {
  const line = (s: StartFigures) => ({ lastStartSeconds: s.lastStartedAfterSeconds, p50Seconds: s.latenessSeconds.p50, p99Seconds: s.latenessSeconds.p99, startsPerSecond: s.claimsPerSecond });
  return { slotkeeper: line(spike), ...Object.fromEntries(Object.entries(peers).map(([peer, r]) => [peer, line(r)])) };
}

/** The spike with the schedules split over two handlers, each served by half the workers, on database `splitName`. */
async function runSplit(admin: pg.Client, serverUrl: string, splitName: string) {
  await admin.query(`CREATE DATABASE ${splitName}`);
  const url = withDatabase(serverUrl, splitName);
  const pool = createPool(url, { max: 4, applicationName: "slotkeeper:bench" });
  try {
    await migrateDatabase(url);
    const db = createDb(pool);
    await setPartitionCount(db, opts.partitions);
    return await runSpike(pool, db, { url, ...opts, handlers: 2 });
  } finally {
    await pool.end();
  }
}

/**
 * With --hosts N: N hosts (network namespaces on a bridge, lib/testing/hosts.ts; needs root) and a
 * PostgreSQL cluster of the bench's own listening on the bridge, so each worker reaches the
 * database over its own host's link. Otherwise DATABASE_URL's server or the embedded one.
 */
async function openServer(): Promise<{ url: string; hostsUrl?: string; hosts?: Hosts; stop: () => Promise<void> }> {
  if (hostCount <= 0) return openDatabase(loadConfig());
  const hosts = createHosts(hostCount);
  try {
    const db = await startHostsDatabase(hosts, { migrate: false });
    return { url: db.url, hostsUrl: db.hostsUrl, hosts, stop: async () => (await db.stop(), hosts.cleanup()) };
  } catch (err) {
    hosts.cleanup();
    throw err;
  }
}

async function main() {
  const server = await openServer();
  const name = `sk_bench_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = withDatabase(server.url, name);
  const pool = createPool(url, { max: 4, applicationName: "slotkeeper:bench" });
  const started = Date.now();
  const splitName = `${name}_split`;
  try {
    await migrateDatabase(url);
    const db = createDb(pool);
    await setPartitionCount(db, opts.partitions);
    if (args.fleet) {
      const fleetOptions = {
        schedules: num(args["fleet-schedules"], 2_000_000),
        steadySeconds: num(args["fleet-steady-seconds"], 60),
        readers: num(args["fleet-readers"], 20),
        readerPaceMs: num(args["fleet-reader-pace-ms"], LIVE_REFRESH_MS),
        workers: opts.workers,
        batch: opts.batch,
        partitions: opts.partitions,
        concurrency: opts.concurrency,
        pollIntervalMs: opts.pollIntervalMs,
      };
      const fleet = await runFleet(pool, db, { url, ...fleetOptions });
      console.log(JSON.stringify({ machine: machine(), options: fleetOptions, fleet, totalSeconds: Math.round((Date.now() - started) / 1000) }, null, 2));
      return;
    }
    if (args["alerts-measure"]) {
      const alertsOptions = { schedules: num(args["alerts-schedules"], 100_000) };
      const alertsMeasure = await measureAlerts(pool, db, alertsOptions);
      console.log(JSON.stringify({ machine: machine(), options: alertsOptions, alertsMeasure, totalSeconds: Math.round((Date.now() - started) / 1000) }, null, 2));
      return;
    }
    const rawOptions = { url, schedules: opts.schedules, workers: opts.workers, batch: opts.batch, loopsPerWorker: 2, partitions: opts.partitions };
    const raw = args["skip-raw"] ? null : await runRawSpike(pool, rawOptions);
    // The plain `FOR UPDATE SKIP LOCKED` claim, once: a labelled row, not the ceiling ratios are quoted against.
    const rawPlain = args["skip-raw"] ? null : await runRawSpike(pool, { ...rawOptions, mode: "plain" });
    if (args["raw-only"]) {
      console.log(JSON.stringify({ options: opts, raw, rawPlain, loadAverage: os.loadavg() }, null, 2));
      return;
    }
    const hostsOpts = server.hosts && server.hostsUrl ? { hosts: server.hosts.hosts, workerUrl: withDatabase(server.hostsUrl, name) } : {};
    const sk = await runSpike(pool, db, { url, ...opts, ...hostsOpts });
    // Per host: its address, its workers' runs and last start (from the runs' worker ids).
    const hostsReport = server.hosts
      ? server.hosts.hosts.map((h) => {
          const mine = sk.spike.byWorker.filter((w) => w.worker.startsWith(`bench-${h.name}-`));
          return { host: h.name, address: h.address, workers: mine.length, runs: mine.reduce((n, w) => n + w.runs, 0), lastStartSeconds: Math.max(0, ...mine.map((w) => w.lastStartSeconds)) };
        })
      : null;
    // The split variant on a fresh database (the same S, W, partitions), before the second ceiling.
    const split = handlers === 2 ? await runSplit(admin, server.url, splitName) : null;
    // The ceiling again, after ours: this machine's speed drifts by a fifth or more within minutes
    // (raw alone: 39,000-54,000 starts/s in one hour), so ours is compared with the mean of the
    // ceiling measured on either side of it rather than with one measurement minutes earlier.
    const rawAfter = raw ? await runRawSpike(pool, rawOptions) : null;
    // The peers last, on databases of their own, with the spike's S, W, batch and poll.
    const peers = args.peers
      ? await runPeers(server.url, name, { jobs: opts.schedules, workers: opts.workers, batch: opts.batch, pollIntervalMs: opts.pollIntervalMs }, args.keep === true)
      : null;
    const ceiling = raw && rawAfter ? (raw.claimsPerSecond + rawAfter.claimsPerSecond) / 2 : null;
    const ceilingDone = raw && rawAfter ? (raw.completionsPerSecond + rawAfter.completionsPerSecond) / 2 : null;
    const round3 = (x: number) => Math.round(x * 1000) / 1000;
    const report = {
      machine: machine(),
      options: { ...opts, quick },
      materialise: sk.materialise,
      alertPassSecondsAtLeast: sk.alertPassSecondsAtLeast,
      spike: sk.spike,
      hosts: hostsReport,
      raw,
      rawAfter,
      rawPlain,
      ratio: raw && rawAfter ? ceilingRatios(sk.spike, raw, rawAfter, rawPlain) : null,
      steady: sk.steady,
      heartbeatHot: sk.heartbeatHot,
      peers: peers ? { sideBySide: sideBySide(sk.spike, peers), ...peers } : null,
      // The two-handler split beside the plain spike: its share of the same ceiling, and how many
      // of its runs were started outside their holder's partitions (in sweep partitions).
      split: split
        ? {
            handlers: 2,
            spike: { lastStartedAfterSeconds: split.spike.lastStartedAfterSeconds, latenessSeconds: split.spike.latenessSeconds, claimsPerSecond: split.spike.claimsPerSecond, runs: split.spike.runs, check: split.spike.check, sweptRuns: split.spike.sweptRuns, byWorker: split.spike.byWorker, cpuPerRun: split.spike.cpuPerRun, statements: split.spike.statements },
            steady: split.steady,
            ratio: { startsPerSecond: ceiling ? round3(split.spike.claimsPerSecond / ceiling) : null, ofPlain: round3(split.spike.claimsPerSecond / sk.spike.claimsPerSecond) },
            plainSweptRuns: sk.spike.sweptRuns,
          }
        : null,
      targets: {
        spikeAllStartedWithin10s: sk.spike.lastStartedAfterSeconds <= 10,
        startsAtLeast90PercentOfRaw: startsMeetTarget(sk.spike.claimsPerSecond, ceiling),
        completionsAtLeast85PercentOfRaw: ceilingDone ? sk.spike.completionsPerSecond >= 0.85 * ceilingDone : null,
        everyRunStartedOnceAndDone: sk.spike.check.ok && (split === null || split.spike.check.ok) && [raw, rawAfter, rawPlain].every((r) => r === null || r.check.ok),
        steadyAtLeast35000PerSecond: sk.steady.runsPerSecond >= 35_000,
        workerRssUnder200Mb: sk.spike.peakWorkerRssMb.every((m) => m < 200),
        attemptHistoryComplete: sk.spike.attemptsRows >= sk.spike.runs,
        splitAtLeast90PercentOfRaw: split ? startsMeetTarget(split.spike.claimsPerSecond, ceiling) : null,
        heartbeatsAreHot: sk.heartbeatHot.hotRatio >= 0.9,
      },
      totalSeconds: Math.round((Date.now() - started) / 1000),
    };
    console.log(JSON.stringify(report, null, 2));
  } finally {
    await pool.end();
    if (!args.keep) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    if (!args.keep) await admin.query(`DROP DATABASE IF EXISTS ${splitName} WITH (FORCE)`);
    await admin.end();
    await server.stop();
  }
}

main().catch((err) => {
  console.error(`bench: ${err?.stack ?? err}`);
  process.exit(1);
});
