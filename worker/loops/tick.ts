import type { Db } from "../../lib/db/client";
import type { Logger } from "../../lib/log";
import { tickOnce } from "../../lib/runs/tick";
import { startLoop, type Loop } from "./loop";

export type TickLoopOptions = {
  db: Db;
  log: Logger;
  intervalMs: number;
  horizonSeconds: number;
  graceSeconds: number;
  /** Which partitions to tick; null = all. Shared with the claim loop: one place decides. */
  partitions: () => number[] | null;
  /** Called when the tick created runs (they may be due now). */
  onCreated?: () => void;
};

/** Materialise slots every interval through `tickOnce`; logs only when it did something. */
export function startTickLoop(o: TickLoopOptions): Loop {
  return startLoop({
    name: "run:tick",
    intervalMs: o.intervalMs,
    log: o.log,
    run: async () => {
      const r = await tickOnce(o.db, { partitions: o.partitions(), horizonSeconds: o.horizonSeconds, graceSeconds: o.graceSeconds });
      if (r.created > 0 || r.skipped > 0 || r.coalesced > 0 || r.tooLate > 0) {
        o.log.info({ event: "run:tick:done", ...r });
        if (r.created > 0) o.onCreated?.();
      }
    },
  });
}
