import { totalConcurrency, validateQueues, type CommandsPolicy, type Config } from "../lib/config";
import type { Db } from "../lib/db/client";
import type { Handler } from "../lib/handlers/types";
import type { Logger } from "../lib/log";
import { heartbeatWorker, markWorkerStopped, registerWorker } from "../lib/workers/registry";
import { PARTITION_ORPHANED_AFTER_SECONDS } from "../lib/partitions/leases";
import { runLatenessPass } from "../lib/runs/lateness-pass";
import { createWorkerMetrics } from "../lib/metrics/worker-metrics";
import { startMetricsServer } from "../lib/metrics/worker-server";
import { createHandlerRegistry } from "./handlers/registry";
import { startAlertLoop } from "./loops/alerts";
import { startAutoResumeLoop } from "./loops/auto-resume";
import { startClaimLoop } from "./loops/claim";
import { startDeliveryLoop } from "./loops/deliveries";
import { startLeaseLoop } from "./loops/lease";
import { startLoop, type Loop } from "./loops/loop";
import { startPartitionsLoop } from "./loops/partitions";
import { startRetentionLoop } from "./loops/retention";
import { startTickLoop } from "./loops/tick";
import { createRunner } from "./runner";
import { listenForDueRuns } from "./wake";

/**
 * How often a worker stamps its own row: the console's "last heartbeat", and its runs held per
 * queue, which other workers read each partition pass to claim in its partitions while it is full
 * (lib/partitions/sweep.ts), so as often as that pass.
 */
export const WORKER_HEARTBEAT_MS = 1_000;

/** How long, after aborting handlers on shutdown, the worker waits to write their releases. */
export const RELEASE_TIMEOUT_MS = 5_000;

export type WorkerDeps = {
  db: Db;
  config: Config;
  log: Logger;
  workerId: string;
  /** Every handler this worker can run (built-ins included); registered in workers.handlers. */
  handlers: Handler[];
  version: string;
  /** When given, LISTEN here to wake early when a run becomes due. */
  databaseUrl?: string;
  /** Which partitions this worker ticks and claims in; null = all. The one place that decides. */
  partitionsProvider?: () => number[] | null;
  /** Run the tick loop (default true). */
  tick?: boolean;
  /** What the built-in `command` handler among `handlers` may run (SLOTKEEPER_COMMANDS), shown on the Workers page; null or absent when it is not served. */
  commands?: CommandsPolicy;
};

export type RunningWorker = { id: string; inFlight: () => number; stop: () => Promise<void> };

/** Register the worker and start its loops; `stop()` stops claiming, drains, releases and marks the worker stopped. */
export async function startWorker(deps: WorkerDeps): Promise<RunningWorker> {
  const { db, log, workerId, config } = deps;
  const registry = createHandlerRegistry(deps.handlers);
  // The queues it serves, each with its concurrency (SLOTKEEPER_QUEUES, or runWorker's `queues`).
  const queues = validateQueues(config.queues ?? { default: config.workerConcurrency }, "queues");
  const concurrency = totalConcurrency(queues);
  const metrics = createWorkerMetrics();
  // First of all: a port already taken fails the start before anything else is running.
  const metricsServer = config.metricsPort === undefined ? undefined : await startMetricsServer(metrics.registry, { host: config.metricsHost, port: config.metricsPort });
  if (metricsServer) log.info({ event: "worker:metrics:listen", host: config.metricsHost, port: metricsServer.port });
  await registerWorker(db, { id: workerId, concurrency, handlers: registry.list(), version: deps.version, commands: deps.commands ?? null, queues });
  let claimLoop: Loop | undefined;
  let tickLoop: Loop | undefined;
  // Partition leases decide, unless the caller does: a fair share of partitions, renewed, rebalanced.
  const partitionLoop = deps.partitionsProvider
    ? undefined
    : startPartitionsLoop({
        db,
        workerId,
        log,
        applyPartitionCount: process.env.SLOTKEEPER_PARTITIONS ? config.partitions : undefined,
        leaseSeconds: config.partitionLeaseSeconds,
        onChange: () => {
          claimLoop?.wake();
          tickLoop?.wake();
        },
      });
  await partitionLoop?.ready;
  const held = deps.partitionsProvider ?? partitionLoop!.held;
  // Where this worker ticks and claims: its own partitions and any orphaned ones (a silent holder's:
  // lib/partitions/leases.ts), so a dead worker's slots still start within the stated bound.
  const partitions = deps.partitionsProvider ?? (() => withOrphans(partitionLoop!.held(), partitionLoop!.orphaned()));
  log.info({ event: "worker:start", workerId, concurrency, queues, handlers: registry.list().map((h) => h.name), commands: deps.commands ?? null });

  const runner = createRunner({
    metrics,
    db,
    log,
    workerId,
    registry,
    concurrency,
    queues,
    claimBatchSize: config.claimBatchSize,
    leaseSafetyMarginMs: config.leaseSafetyMarginMs,
    rescueIntervalMs: config.pollIntervalMs,
    partitions,
    // Routing: partitions whose holder cannot claim some of this worker's runs (none with a partitionsProvider).
    sweep: () => partitionLoop?.sweep() ?? [],
    onSlotFree: () => claimLoop?.wake(),
    // Every due run of a partition it starts claiming in, once (not the periodic pass's window).
    settle: (fresh) => runLatenessPass(db, { partitions: fresh, graceSeconds: config.catchUpGraceSeconds, windowPerPartition: null }),
    settleAfterAbsenceMs: PARTITION_ORPHANED_AFTER_SECONDS * 1000,
  });
  claimLoop = startClaimLoop({ runner, pollIntervalMs: config.pollIntervalMs, log });
  // Due runs are waiting for this worker: its claims came back full within two polls.
  const backlogged = () => runner.backlogged(Math.max(1000, 2 * config.pollIntervalMs));
  // Retention: only the holder of partition 0 sweeps (an advisory lock covers hand-overs), and it
  // steps aside while its claims come back full.
  const retentionLoop = startRetentionLoop({
    db,
    log,
    policy: { retentionDays: config.retentionDays, maxRunsPerSchedule: config.retentionMaxRuns },
    isSweeper: () => (held() ?? [0]).includes(0),
    busy: backlogged,
  });
  const leaseLoop = startLeaseLoop({ runner, log });
  tickLoop =
    deps.tick === false
      ? undefined
      : startTickLoop({
          db,
          log,
          intervalMs: config.pollIntervalMs,
          horizonSeconds: config.tickHorizonSeconds,
          graceSeconds: config.catchUpGraceSeconds,
          partitions,
          onCreated: () => claimLoop?.wake(),
          backlogged,
        });
  const heartbeatLoop = startLoop({
    name: "worker:heartbeat",
    intervalMs: WORKER_HEARTBEAT_MS,
    log,
    run: async () => {
      await heartbeatWorker(db, workerId, runner.inFlight, runner.queues());
    },
  });
  // Alerts: evaluated by workers so they fire with no browser open; sent by their own loop, so a slow receiver never holds up runs.
  const deliveryLoop = startDeliveryLoop({ db, log, config });
  const autoResumeLoop = startAutoResumeLoop({ db, log });
  const alertLoop = startAlertLoop({ db, log, config, onEvents: () => deliveryLoop.wake() });
  const listener = deps.databaseUrl ? listenForDueRuns(deps.databaseUrl, () => claimLoop?.wake(), log, { queryTimeoutMs: config.dbQueryTimeoutMs }) : undefined;

  let stopping: Promise<void> | undefined;
  const stop = async () => {
    // Stop claiming first, then give in-flight handlers the grace period.
    await Promise.all([claimLoop!.stop(), tickLoop?.stop(), listener?.stop(), retentionLoop.stop(), autoResumeLoop.stop(), alertLoop.stop(), deliveryLoop.stop()]);
    log.info({ event: "worker:drain", workerId, inFlight: runner.inFlight, graceMs: config.shutdownGraceMs });
    try {
      if (!(await runner.drain(config.shutdownGraceMs))) {
        // MUST release the claims whatever happens: abort the stragglers; their results put the
        // runs back to pending (token still rising). If that write fails, their leases expire.
        runner.abortAll("shutdown", `worker ${workerId} shutting down: grace of ${config.shutdownGraceMs} ms passed`);
        await runner.drain(RELEASE_TIMEOUT_MS);
      }
    } finally {
      await Promise.all([leaseLoop.stop(), heartbeatLoop.stop(), partitionLoop?.stop(), metricsServer?.close()]);
      await markWorkerStopped(db, workerId).catch((err) => log.warn({ event: "worker:stop:unrecorded", err }));
      log.info({ event: "worker:stop", workerId, leftInFlight: runner.inFlight });
    }
  };

  return {
    id: workerId,
    inFlight: () => runner.inFlight,
    stop: () => (stopping ??= stop()),
  };
}

/** Held partitions and orphaned ones, ascending, each once. */
function withOrphans(held: number[], orphaned: number[]): number[] {
  if (orphaned.length === 0) return held;
  return [...new Set([...held, ...orphaned])].sort((a, b) => a - b);
}
