// The faults that happen at fixed points of the run rather than by chance, so that even the short
// run has each of them, deterministically: a silent network (scripts/chaos/silent.ts), a long
// transaction (long-transaction.ts) and database clock steps (clock-step.ts). Pool exhaustion is a
// schedule (pool.ts) and runs every 20 s by itself. Points are fractions of the fault phase in the
// short run, and repeat on a period in longer ones.
import type pg from "pg";
import { stepClock, type ClockStep } from "./clock-step";
import type { FaultEvent } from "./faults";
import { holdLongTransaction, type LongTransaction } from "./long-transaction";
import type { ChaosOptions } from "./options";
import type { ChaosProxy } from "./proxy";
import type { Random } from "./random";
import { silenceWorker, type SilentEpisode } from "./silent";
import type { WorkerPool } from "./workers";

export type TimedDeps = {
  o: ChaosOptions;
  random: Random;
  /** A pool straight to the database (not through the proxy). */
  pool: pg.Pool;
  url: string;
  workers: WorkerPool;
  proxy: ChaosProxy;
  /** The workers' SLOTKEEPER_DB_QUERY_TIMEOUT_MS. */
  queryTimeoutMs: number;
  log: (line: string) => void;
};

export type TimedFaults = { silent: SilentEpisode[]; silentEvents: FaultEvent[]; longTransactions: LongTransaction[]; clockSteps: ClockStep[]; silentMs: number };

/** How far each clock step moves sk_now(). */
export const CLOCK_STEP_MS = 20_000;

const sleepUntil = async (t: number) => {
  for (let i = 0; i < 10_000 && Date.now() < t; i++) await new Promise((r) => setTimeout(r, Math.min(1000, t - Date.now())));
};

/** When each fault starts (this process's clock), for a phase from `start` to `deadline`. */
export function timedPoints(o: ChaosOptions, start: number, deadline: number) {
  const phase = deadline - start;
  if (o.short) {
    // Silence from 6 % (12 s), the clock steps at 25 % and 10 s later: both over before the crash (45 % or later).
    return { silent: [start + 0.06 * phase], clock: [start + 0.25 * phase], longTx: [[start + 0.02 * phase, start + 0.95 * phase]] as [number, number][] };
  }
  const every = (first: number, period: number) => {
    const out: number[] = [];
    for (let t = start + first; t < deadline - 60_000; t += period) out.push(t);
    return out;
  };
  return {
    silent: every(60_000, 240_000),
    clock: every(180_000, 420_000),
    longTx: every(30_000, 360_000).map((t) => [t, Math.min(t + 180_000, deadline - 10_000)] as [number, number]),
  };
}

/** Run the timed faults until `deadline`; each is bounded and returns by itself. */
export async function runTimedFaults(d: TimedDeps, start: number, deadline: number): Promise<TimedFaults> {
  const points = timedPoints(d.o, start, deadline);
  const leaseMs = d.o.leaseSeconds * 1000;
  // Longer than a lease and long enough for the worker to notice and claim again while it lasts.
  const silentMs = Math.max(3 * leaseMs, 3 * d.queryTimeoutMs);
  const out: TimedFaults = { silent: [], silentEvents: [], longTransactions: [], clockSteps: [], silentMs };
  const silent = async () => {
    for (const t of points.silent) {
      await sleepUntil(t);
      const r = await silenceWorker({ ...d }, silentMs).catch((err) => (d.log(`chaos: silence failed: ${String(err)}`), null));
      if (r) (out.silent.push(r.episode), out.silentEvents.push(r.event));
    }
  };
  // A step is retried while the database is away (the crash): a forward step must be undone.
  const step = async (ms: number) => {
    for (let i = 0; i < 60; i++) {
      try {
        d.log(`chaos: stepping the database clock ${ms} ms`);
        return out.clockSteps.push(await stepClock(d.pool, ms));
      } catch (err) {
        d.log(`chaos: clock step failed, again: ${String(err)}`);
        await sleepUntil(Date.now() + 1000);
      }
    }
    throw new Error(`could not step the database clock by ${ms} ms`);
  };
  const clock = async () => {
    for (const t of points.clock) {
      await sleepUntil(t);
      await step(CLOCK_STEP_MS);
      await sleepUntil(Date.now() + 2.5 * leaseMs);
      await step(-CLOCK_STEP_MS);
    }
  };
  const longTx = async () => {
    for (const [from, to] of points.longTx) {
      await sleepUntil(from);
      out.longTransactions.push(...(await holdLongTransaction(d.url, to, d.log)));
    }
  };
  await Promise.all([silent(), clock(), longTx()]);
  return out;
}
