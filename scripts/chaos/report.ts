// Turns the fault log, the API calls and the database's final state into the JSON report, and
// decides pass/fail. Every check is a count that must be zero (or a bound that must hold).
import fs from "node:fs";
import path from "node:path";
import type pg from "pg";
import type { ApiCall } from "./api";
import { createDb } from "../../lib/db/client";
import { findQueueMismatches } from "../../lib/runs/queue-consistency";
import { readDuplicateStarts, readFencing, readRunCounters, readRunHealth, readRuns, readSchedules, readStartLags, readTakeovers } from "./checks";
import type { FaultLog } from "./faults";
import { checkSlots, type OracleSchedule } from "./oracle";
import { quantile } from "./random";

/**
 * lost_acks: an acknowledged (2xx) change whose effect is not in the database at the end. Calls
 * are replayed in order per target; a failed call makes its field unknown until the next ack.
 */
export async function countLostAcks(pool: pg.Pool, calls: ApiCall[]) {
  const schedules = new Map((await readSchedules(pool)).map((s) => [s.name, s]));
  const lost: { kind: string; target: string; why: string }[] = [];
  const expected = new Map<string, { description?: string | null; enabled?: boolean | null }>();
  for (const c of calls) {
    if (c.kind === "requeue") continue;
    const e = expected.get(c.target) ?? {};
    if (c.kind === "create" && c.acked && !schedules.has(c.target)) lost.push({ kind: c.kind, target: c.target, why: "schedule missing" });
    if (c.kind === "edit") e.description = c.acked ? c.expect!.description : null;
    if (c.kind === "pause" || c.kind === "resume") e.enabled = c.acked ? c.expect!.enabled : null;
    expected.set(c.target, e);
  }
  for (const [name, e] of expected) {
    const s = schedules.get(name);
    if (!s) continue;
    if (typeof e.description === "string" && s.description !== e.description) lost.push({ kind: "edit", target: name, why: `description is "${s.description}"` });
    if (typeof e.enabled === "boolean" && s.enabled !== e.enabled) lost.push({ kind: e.enabled ? "resume" : "pause", target: name, why: `enabled is ${s.enabled}` });
  }
  const requeues = calls.filter((c) => c.kind === "requeue" && c.acked);
  const counters = await readRunCounters(pool, requeues.map((c) => c.expect!.runId!));
  for (const c of requeues) {
    const r = counters.get(c.expect!.runId!);
    // A kept re-queue either left the run live or raised its allowance and ran it again.
    const kept = r && (r.state !== "dead" || r.attempts > c.expect!.attemptsBefore! || r.max_attempts > c.expect!.maxAttemptsBefore!);
    if (!kept) lost.push({ kind: "requeue", target: c.target, why: r ? `run still dead after ${r.attempts} attempts` : "run missing" });
  }
  return lost;
}

/** Count worker log events about fenced writes that were refused (stale finishes, heartbeats, ledger writes). */
export function countRejectedStaleWrites(logDir: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const f of fs.readdirSync(logDir).filter((n) => n.endsWith(".log"))) {
    for (const m of fs.readFileSync(path.join(logDir, f), "utf8").matchAll(/"event":"([^"]*(?:stale|rejected|lost|superseded|fenced|abort)[^"]*)"/g)) {
      counts[m[1]] = (counts[m[1]] ?? 0) + 1;
    }
  }
  return counts;
}

export type ReportInput = {
  pool: pg.Pool;
  schedules: OracleSchedule[];
  cutAt: number;
  faults: FaultLog;
  calls: ApiCall[];
  leaseMs: number;
  pollMs: number;
  logDir: string;
};

const round = (v: number | null) => (v === null ? null : Math.round(v));

/** Build the report's figures and checks from the database after the drain. */
export async function buildReport(i: ReportInput) {
  const runs = await readRuns(i.pool, i.schedules.map((s) => s.id));
  const slots = checkSlots(i.schedules, runs, i.cutAt);
  const health = await readRunHealth(i.pool, i.cutAt, i.pollMs);
  const fencing = await readFencing(i.pool);
  const starts = await readDuplicateStarts(i.pool);
  const lostAcks = await countLostAcks(i.pool, i.calls);
  // The live part of each unfinished run (run_queue) agrees with its record (runs) after the drain.
  const queue = await findQueueMismatches(createDb(i.pool));
  // A paused schedule's runs wait for the resume on purpose: their lag measures the pause, not us.
  const paused = new Set(i.schedules.filter((s) => s.optionalWindows.length > 0).map((s) => s.name));
  const lagRows = (await readStartLags(i.pool)).filter((l) => !paused.has(l.schedule));
  const lags = lagRows.map((l) => l.lag);
  const worstLags = [...lagRows].sort((a, b) => b.lag - a.lag).slice(0, 3).map((l) => ({ schedule: l.schedule, due_at: new Date(l.dueAt).toISOString(), lag_ms: Math.round(l.lag) }));

  // Recovery: from the kill (or freeze) to the next attempt of each run the victim held.
  const held = i.faults.faults.flatMap((f) => f.held.map((h) => ({ ...h, at: f.at, kind: f.kind })));
  const takeovers = await readTakeovers(i.pool, held);
  // The article's bound is lease + poll interval. The tolerance covers what the observer adds: the
  // kill is timestamped by this process just before the signal, a poll period runs from the end
  // of the previous pass, and the claim statement itself takes time on a loaded 2-core box.
  const boundMs = i.leaseMs + i.pollMs;
  const toleranceMs = 500;
  // No takeover can happen while the database is down: a fault whose takeover window overlaps the
  // restart (a churn kill a second before it, say) gets the outage added to its bound, plus one
  // reconnect back-off of the workers' loops (at most the outage again). Other samples keep the
  // plain bound.
  const outageExtraMs = (at: number) =>
    i.faults.dbRestarts.reduce((sum, r) => (r.at < at + boundMs && r.at + r.tookMs > at ? sum + 2 * r.tookMs : sum), 0);
  const recoveries: number[] = [];
  let overBound = 0;
  let overBoundPlusTolerance = 0;
  let duringOutage = 0;
  let finishedBeforeFault = 0;
  let unrecovered = 0;
  for (const h of held) {
    const t = takeovers.get(`${h.runId}:${h.attempt}`);
    if (t?.takeoverAt) {
      const took = t.takeoverAt - h.at;
      const extra = outageExtraMs(h.at);
      if (extra > 0) duringOutage++;
      recoveries.push(took);
      if (took > boundMs + extra) overBound++;
      if (took > boundMs + extra + toleranceMs) overBoundPlusTolerance++;
    } else if (t?.finishedBy) finishedBeforeFault++;
    else unrecovered++;
  }
  const attemptViolations = fencing.attempts_out_of_range + fencing.attempt_gaps + fencing.double_success + fencing.ledger_token_above_run;
  const staleAccepted = fencing.stale_ledger_writes + fencing.stale_finishes;

  const figures = {
    expected_slots: slots.expectedSlots,
    missing_slots: slots.missingSlots.length,
    duplicate_slots: slots.duplicateSlots.length,
    unexpected_slots: slots.unexpectedSlots.length,
    wrong_final_state: slots.wrongFinalState.length,
    runs_by_state: health.by_state,
    runs_lost: health.lost,
    stuck_running: health.stuck,
    terminal_without_reason: health.no_reason,
    queue_mismatches: queue,
    duplicate_effects: fencing.duplicate_effects,
    missing_effects: fencing.missing_effects,
    repeated_ledger_writes: fencing.repeated_ledger_writes,
    duplicate_starts: { total: starts.total, explained_by_lease_expiry: starts.explainedByLeaseExpiry, by_previous_attempt_outcome: starts.byPrevious, unexplained: starts.unexplained },
    stale_writes_accepted: staleAccepted,
    stale_writes_accepted_detail: { ledger_token_not_final_attempt: fencing.stale_ledger_writes, finish_by_superseded_attempt: fencing.stale_finishes },
    stale_writes_rejected: countRejectedStaleWrites(i.logDir),
    lost_acks: lostAcks.length,
    api_changes: { calls: i.calls.length, acked: i.calls.filter((c) => c.acked).length, by_kind: tally(i.calls.filter((c) => c.acked).map((c) => c.kind)) },
    attempt_violations: attemptViolations,
    attempt_violations_detail: { out_of_range: fencing.attempts_out_of_range, gaps: fencing.attempt_gaps, double_success: fencing.double_success, ledger_token_above_run: fencing.ledger_token_above_run },
    recovery_time_ms: { runs_held_by_victims: held.length, samples: recoveries.length, p50: round(quantile(recoveries, 0.5)), max: round(quantile(recoveries, 1)), bound_ms: boundMs, tolerance_ms: toleranceMs, over_bound: overBound, over_bound_plus_tolerance: overBoundPlusTolerance, overlapping_db_restart: duringOutage, finished_before_fault: finishedBeforeFault, unrecovered },
    start_lag_ms: { excludes_paused_schedules: [...paused], samples: lags.length, p50: round(quantile(lags, 0.5)), p99: round(quantile(lags, 0.99)), max: round(quantile(lags, 1)), worst: worstLags },
  };
  const checks: Record<string, boolean> = {
    missing_slots: figures.missing_slots === 0,
    duplicate_slots: figures.duplicate_slots === 0,
    unexpected_slots: figures.unexpected_slots === 0,
    wrong_final_state: figures.wrong_final_state === 0,
    runs_lost: figures.runs_lost === 0,
    stuck_running: figures.stuck_running === 0,
    terminal_without_reason: figures.terminal_without_reason === 0,
    queue_consistent: Object.values(queue).every((n) => n === 0),
    duplicate_effects: figures.duplicate_effects === 0,
    missing_effects: figures.missing_effects === 0,
    duplicate_starts_explained: starts.unexplained === 0,
    stale_writes_accepted: staleAccepted === 0,
    lost_acks: lostAcks.length === 0,
    attempt_violations: attemptViolations === 0,
    recovery_within_lease_plus_poll: figures.recovery_time_ms.over_bound_plus_tolerance === 0 && unrecovered === 0,
  };
  const examples = {
    missing: slots.missingSlots.slice(0, 5),
    duplicate: slots.duplicateSlots.slice(0, 5),
    unexpected: slots.unexpectedSlots.slice(0, 5),
    wrong_final_state: slots.wrongFinalState.slice(0, 5),
    lost_acks: lostAcks.slice(0, 5),
  };
  return { figures, checks, examples };
}

function tally(items: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of items) out[x] = (out[x] ?? 0) + 1;
  return out;
}
