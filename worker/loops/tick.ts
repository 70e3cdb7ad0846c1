import type { Db } from "../../lib/db/client";
import type { Logger } from "../../lib/log";
import { analyzeQueue, queueNeedsAnalyze } from "../../lib/runs/queue-stats";
import { tickOnce } from "../../lib/runs/tick";
import { mayDeferMaterialising } from "../../lib/runs/tick-lead";
import { startLoop, type Loop } from "./loop";

export type TickLoopOptions = {
  db: Db;
  log: Logger;
  intervalMs: number;
  horizonSeconds: number;
  graceSeconds: number;
  /** Which partitions to tick (held and orphaned); null = all. Shared with the claim loop: one place decides. */
  partitions: () => number[] | null;
  /** Called when the tick created runs (they may be due now). */
  onCreated?: () => void;
  /**
   * True while due runs are waiting for this worker (its claims come back full): the tick then
   * materialises only when it is less than half its horizon ahead (lib/runs/tick-lead.ts).
   */
  backlogged?: () => boolean;
};

/**
 * At most this often a tick also runs the lateness pass (over a window of the oldest due runs of
 * each partition: two index probes per run it looks at, whatever the backlog). Slots
 * missed while nobody claimed in a partition are settled before this worker's first claim there
 * (worker/runner.ts); this periodic pass catches runs that wait past their successor or past max
 * lateness while the partition is held (no free slot, a long backlog).
 */
export const LATENESS_PASS_INTERVAL_MS = 5_000;

/**
 * Materialise slots every interval through `tickOnce` (not while backlogged and far enough ahead:
 * `backlogged`); logs only when it did something. After it
 * has queued many runs it analyses run_queue, so that every connection's cached plans of the hot
 * statements are made again for the queue's new size (see lib/runs/queue-stats.ts).
 */
export function startTickLoop(o: TickLoopOptions): Loop {
  let lastLatenessPass = -Infinity;
  let queuedSinceAnalyze = 0;
  let queuedAtAnalyze = 0;
  return startLoop({
    name: "run:tick",
    intervalMs: o.intervalMs,
    log: o.log,
    run: async () => {
      const now = performance.now();
      const latenessPass = now - lastLatenessPass >= LATENESS_PASS_INTERVAL_MS;
      const partitions = o.partitions();
      // Backlogged and far enough ahead: no batches this time; the lateness pass keeps its pace.
      const defer = o.backlogged?.() === true && (await mayDeferMaterialising(o.db, partitions, o.horizonSeconds));
      if (defer && !latenessPass) return;
      if (latenessPass) lastLatenessPass = now;
      const r = await tickOnce(o.db, { partitions, horizonSeconds: o.horizonSeconds, graceSeconds: o.graceSeconds, latenessPass, ...(defer ? { maxBatches: 0 } : {}) });
      if (r.created > 0 || r.skipped > 0 || r.coalesced > 0 || r.tooLate > 0) {
        o.log.info({ event: "run:tick:done", ...r });
        if (r.created > 0) o.onCreated?.();
      }
      queuedSinceAnalyze += r.created;
      if (queueNeedsAnalyze(queuedSinceAnalyze, queuedAtAnalyze)) {
        queuedSinceAnalyze = 0;
        // Best effort: without the right to analyse (not the table's owner) autovacuum still will.
        queuedAtAnalyze = await analyzeQueue(o.db).catch((err) => {
          o.log.warn({ event: "run:tick:analyze:failed", err });
          return queuedAtAnalyze;
        });
      }
    },
  });
}
