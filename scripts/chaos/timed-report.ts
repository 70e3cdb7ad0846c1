// The timed faults in the report: what each allows the other checks (a clock step makes slots
// late and leases expire by design), and their own figures and checks.
import type pg from "pg";
import { checkClockSteps, clockStepWindows, type ClockStep } from "./clock-step";
import { lagsDuring } from "./long-transaction";
import type { OracleRun, OracleSchedule } from "./oracle";
import { readPoolExhaustions } from "./pool";
import { quantile } from "./random";
import { checkSilentEpisodes } from "./silent";
import type { TimedFaults } from "./timed";

export type TimedReportInput = TimedFaults & { hogScheduleIds: number[]; queryTimeoutMs: number };

/**
 * When the database clock first read `dbTime` or later, on the server's real clock (ms): the instant
 * a slot due at `dbTime` came due. Before any step the two clocks agree (sk_clock starts at no
 * shift); a forward step makes every instant it skips come due at the step; after a step back the
 * clock re-lives an interval whose instants came due the first time round.
 */
export function firstReachedAt(steps: ClockStep[], dbTime: number): number {
  let shift = 0;
  let from = -Infinity;
  for (const s of [...steps].sort((a, b) => a.at - b.at)) {
    const realAt = s.dbBefore - shift;
    if (dbTime < s.dbBefore) return Math.max(from, dbTime - shift);
    shift += s.stepMs;
    from = realAt;
  }
  return Math.max(from, dbTime - shift);
}

/** What the clock steps excuse (`offsetMs` = database minus this process). */
export function timedAllowances(t: TimedReportInput | undefined, leaseMs: number, offsetMs: number) {
  const steps = t?.clockSteps ?? [];
  const windows = clockStepWindows(steps, leaseMs).map((w) => ({ ...w, from: w.from + offsetMs, to: w.to + offsetMs }));
  return {
    /** When a slot due at `dueAt` (database clock) came due, on the server's real clock. */
    dueReal: (dueAt: number) => firstReachedAt(steps, dueAt),
    /**
     * An attempt running across a forward step lost its lease to the step. Its times are on the
     * database clock as it read then: up to a step ahead, and a finish after the step back can
     * read earlier than its start.
     */
    acrossClockStep: (start: number, end: number) => {
      const [a, z] = [Math.min(start, end), Math.max(start, end)];
      return windows.some((w) => a <= w.to + w.extraMs && z >= w.from);
    },
    /** A lease taken between the steps ends a step later in real time: recovery gets that much more. */
    recoveryExtraMs: (at: number) => windows.reduce((sum, w) => (at + offsetMs >= w.from && at + offsetMs <= w.to ? sum + w.extraMs : sum), 0),
  };
}

/** Figures, checks and faults_happened entries of the timed faults. */
export async function timedReport(
  pool: pg.Pool,
  t: TimedReportInput | undefined,
  c: { schedules: OracleSchedule[]; runs: OracleRun[]; lagRows: { runId: number; dueReal: number; lag: number }[]; offsetMs: number; leaseMs: number; pollMs: number; statedBoundMs: number; outageAllowanceMs: number; excluded: (dueReal: number, lag: number) => boolean; judged: (dueReal: number, lag: number) => number },
) {
  if (!t) return { figures: {}, checks: {} as Record<string, boolean>, happened: {} as Record<string, boolean> };
  // Claiming again needs the detection (the query timeout), a retry's back-off, a reconnect and due
  // work in reach (its partitions may be orphaned meanwhile); the suite's own cuts go on during the
  // episode and can add a back-off. A loop can draw a second silent connection from its pool (one
  // another loop had in hand when the first timeout dropped the idle ones), and wait the timeout
  // once more (seen: the claim loop timing out twice, claiming again after 10.9 s with a 4 s timeout
  // and lease). Stated: within twice the query timeout plus a lease.
  const silentBoundMs = 2 * t.queryTimeoutMs + c.leaseMs;
  // Every unanswered statement is given up after the query timeout; a LISTEN ping may wait up to one
  // interval (the same timeout) to be sent, which does not count: the wait starts at the send.
  const silent = await checkSilentEpisodes(pool, t.silent, c.offsetMs, silentBoundMs, t.queryTimeoutMs + 1000, t.clockSteps);
  // The slots a forward step skips come due at once, as after an outage: the stated bound plus the outage allowance.
  const clock = await checkClockSteps(pool, t.clockSteps, c.schedules, c.runs, c.statedBoundMs + c.outageAllowanceMs, new Map(c.lagRows.map((l) => [l.runId, l.lag])));
  const hog = await readPoolExhaustions(pool, t.hogScheduleIds);
  const duringTx = lagsDuring(t.longTransactions, c.lagRows.filter((l) => !c.excluded(l.dueReal, l.lag)).map((l) => ({ dueAt: l.dueReal, lag: c.judged(l.dueReal, l.lag) })), c.offsetMs);
  const heldMs = t.longTransactions.reduce((n, s) => n + (s.to - s.from), 0);
  const p99 = quantile(duringTx, 0.99);
  return {
    figures: {
      silent_network: silent,
      pool_exhaustion: hog,
      long_transaction: {
        stretches: t.longTransactions.map((s) => ({ seconds: Math.round((s.to - s.from) / 1000), xid: s.xid, backend_xmin_held: s.backendXminHeld })),
        claim_samples: duringTx.length,
        long_transaction_claim_lateness_p99_seconds: p99 === null ? null : Math.round(p99) / 1000,
        long_transaction_claim_lateness_max_seconds: duringTx.length ? Math.round(Math.max(...duringTx)) / 1000 : null,
      },
      clock_steps: clock,
    },
    checks: <Record<string, boolean>>{
      silent_workers_claimed_again: silent.episodes.length > 0 && silent.over_bound === 0,
      clock_steps_as_the_oracle_says: clock.failures === 0,
      long_transaction_claims_within_bound: duringTx.length > 0 && (p99 ?? Infinity) <= c.statedBoundMs,
    },
    happened: <Record<string, boolean>>{
      silent_network: t.silent.some((e) => e.connections > 1 && e.listen > 0 && e.until - e.at > c.leaseMs && e.closed.some((x) => x.firstUnansweredAt !== null)),
      pool_exhaustion: hog.exhausted > 0,
      long_transaction: heldMs >= 30_000 && t.longTransactions.some((s) => s.backendXminHeld),
      clock_step_forward_and_back: t.clockSteps.some((s) => s.stepMs > 0) && t.clockSteps.some((s) => s.stepMs < 0),
    },
  };
}
