/**
 * What one worker process did, as Prometheus counters and histograms that live in that process and
 * only grow (so `rate()` and `histogram_quantile()` work on them; a restart is a counter reset,
 * which Prometheus handles). Served on the worker's own `/metrics` (lib/metrics/worker-server.ts);
 * the web process's `/api/metrics` keeps the gauges read from the database.
 *
 * Lateness is measured on the database clock (one clock decides): the finish statement that writes
 * an attempt's result returns started_at − run_after and, for first attempts, started_at − due_at,
 * and those are observed here once the result is written.
 */
import { Counter, Histogram, Registry } from "prom-client";
import type { AttemptLateness, RunOutcome } from "../runs/finish";

/** Bucket upper bounds (seconds) of both lateness histograms. */
export const LATENESS_BUCKETS = [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900];

export type WorkerMetrics = ReturnType<typeof createWorkerMetrics>;

/** A registry of one worker's counters and histograms, and the calls that feed it. */
export function createWorkerMetrics() {
  const registry = new Registry();
  const claimPasses = new Counter({ name: "slotkeeper_worker_claim_passes_total", help: "Claim statements this worker ran (each takes up to a batch of due runs).", registers: [registry] });
  const claimed = new Counter({ name: "slotkeeper_worker_runs_claimed_total", help: "Runs this worker claimed (took a lease on, token + 1), expired leases taken over included.", registers: [registry] });
  const settled = new Counter({ name: "slotkeeper_worker_runs_settled_total", help: "Runs a claim of this worker settled instead of starting: skipped (overlap) or dead (a lease expired on the final attempt).", labelNames: ["state"], registers: [registry] });
  const started = new Counter({ name: "slotkeeper_worker_attempts_started_total", help: "Attempts whose handler this worker started.", labelNames: ["handler"], registers: [registry] });
  const finished = new Counter({ name: "slotkeeper_worker_attempts_finished_total", help: "Attempt results this worker wrote, by outcome (succeeded, failed, timed_out, aborted).", labelNames: ["outcome"], registers: [registry] });
  const stale = new Counter({ name: "slotkeeper_worker_results_stale_total", help: "Results this worker could not write because another worker holds a newer token (the fence refused them).", registers: [registry] });
  const claimLateness = new Histogram({
    name: "slotkeeper_claim_lateness_seconds",
    help: "Per attempt this worker wrote: how long the run waited between becoming claimable (run_after) and being claimed (started_at), database clock.",
    buckets: LATENESS_BUCKETS,
    registers: [registry],
  });
  const startLateness = new Histogram({
    name: "slotkeeper_start_lateness_seconds",
    help: "Per first attempt this worker wrote: how late it began after its due time (started_at - due_at), database clock.",
    buckets: LATENESS_BUCKETS,
    registers: [registry],
  });
  // Series that exist from the first scrape, so rate() has a zero to start from.
  for (const outcome of ["succeeded", "failed", "timed_out", "aborted"] satisfies RunOutcome[]) finished.inc({ outcome }, 0);
  for (const state of ["skipped", "dead"]) settled.inc({ state }, 0);

  return {
    registry,
    /** One claim statement ran: `runs` claimed, `settledStates` one entry per run settled instead. */
    claimPass(runs: number, settledStates: string[]): void {
      claimPasses.inc();
      if (runs > 0) claimed.inc(runs);
      for (const state of settledStates) settled.inc({ state });
    },
    /** A handler started. */
    attemptStarted(handler: string): void {
      started.inc({ handler });
    },
    /** Results were written: their outcomes and their lateness; `staleCount` were refused by the fence. */
    resultsWritten(outcomes: RunOutcome[], lateness: AttemptLateness[], staleCount: number): void {
      for (const outcome of outcomes) finished.inc({ outcome });
      for (const l of lateness) {
        claimLateness.observe(Math.max(0, l.claimSeconds));
        if (l.startSeconds !== null) startLateness.observe(Math.max(0, l.startSeconds));
      }
      if (staleCount > 0) stale.inc(staleCount);
    },
  };
}
