// The peers' settings for the spike (scripts/bench/peers.ts, scripts/bench/peer-worker.ts), in one place.

export type PeerName = "graphile-worker" | "pg-boss";

export const PEERS: readonly PeerName[] = ["graphile-worker", "pg-boss"];

/** The task (graphile-worker) and queue (pg-boss) name of the bench's no-op jobs. */
export const PEER_QUEUE = "bench_noop";

/** The application_name of the peers' worker connections. */
export const PEER_APPLICATION_NAME = "slotkeeper:bench-peer";

/**
 * graphile-worker's configuration for throughput, from its performance page (the one its
 * ~183,000 jobs/s figure was measured with): 24 concurrent jobs on a pool of 25, job completions
 * batched (`completeJobBatchDelay: 0`). Its local queue (`localQueue.size`, set to the bench's
 * claim batch) fetches and locks due jobs in batches; `pollInterval` is the bench's poll, because
 * jobs that become due later are found by polling, not by LISTEN.
 */
export const GRAPHILE_TUNING = { concurrentJobs: 24, maxPoolSize: 25, completeJobBatchDelay: 0, failJobBatchDelay: 0 } as const;

/**
 * pg-boss's: `batchSize` is the bench's claim batch, two pollers a process (`localConcurrency`, as
 * the raw phase runs two loops a process), `burstWhenBatchFull` so a full batch is followed by the
 * next fetch without waiting out the polling interval, and the smallest polling interval it allows (500 ms).
 */
export const PGBOSS_TUNING = { poolSize: 10, localConcurrency: 2 } as const;
