// Turns the fault log, the API calls and the database's final state into the JSON report, and
// decides pass/fail. Every check is a count that must be zero (or a bound that must hold).
import fs from "node:fs";
import path from "node:path";
import type pg from "pg";
import type { ApiCall } from "./api";
import { createDb } from "../../lib/db/client";
import { findQueueMismatches } from "../../lib/runs/queue-consistency";
import { readAttemptHistory, readDuplicateStarts, readFencing, readLeaseLosses, readLedgerWrites, readLongRuns, readRunCounters, readRuns, readSchedules, readFirstStarts, readTakeovers, type readRunHealth } from "./checks";
import type { FaultLog } from "./faults";
import { fleetDownIntervals, readWorkerStarts, waitJudgedFrom, workerUpIntervals } from "./fleet-down";
import { checkSlots, type OracleSchedule } from "./oracle";
import { checkTimed, type TimedSchedule } from "./timing-oracle";
import { quantile } from "./random";
import { checkWitness, type WitnessHit } from "./witness";
import { timedAllowances, timedReport, type TimedReportInput } from "./timed-report";

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
  /** Runs lost, stuck and without a reason, read after the drain while the workers still ran (checks.ts readRunHealth). */
  health: Awaited<ReturnType<typeof readRunHealth>>;
  schedules: OracleSchedule[];
  cutAt: number;
  faults: FaultLog;
  calls: ApiCall[];
  leaseMs: number;
  pollMs: number;
  logDir: string;
  /** The skewed worker's clock offset (its log's times are that far ahead). */
  skewMs: number;
  /** The schedules' stated worst-case start lateness (lib/schedules/lateness.ts), and what an outage adds. */
  statedBoundMs: number;
  outageAllowanceMs: number;
  /** Database clock minus this process's clock (ms): fault and witness times are on this process's. */
  clockOffsetMs: number;
  witness: { hits: WitnessHit[]; scheduleIds: number[] };
  heartbeatScheduleIds: number[];
  proxyCuts: number;
  /** Cuts after a commit (this process's clock): a claim that committed unheard leaves a lease nobody renews. */
  cutsAfterCommitAt: number[];
  /** When every initial worker was up (this process's clock): the bound is stated for running workers. */
  workersUpAt: number;
  /** Failovers (this process's clock, kill → first claim on the new primary): outages like the crash. */
  failovers?: { at: number; tookMs: number }[];
  /** The schedules whose timing and policies were edited (timing-edits.ts), database clock. */
  timedSchedules?: TimedSchedule[];
  /** Database-clock windows where the timing oracle requires nothing: outages, clock steps. */
  timedUnsure?: [number, number][];
  /** More faults that must have happened (the failover, the console kills and cuts). */
  moreFaultsHappened?: Record<string, boolean>;
  /** The faults at fixed points (scripts/chaos/timed.ts): silent network, long transaction, clock steps, pool exhaustion. */
  timed?: TimedReportInput;
};

/** The idempotency key's documented form (docs/handlers.md): `sk:<scheduleId>:<ISO slot>`. */
const keyOf = (scheduleId: number, slotMs: number) => `sk:${scheduleId}:${new Date(slotMs).toISOString()}`;

const round = (v: number | null) => (v === null ? null : Math.round(v));

/** Build the report's figures and checks from the database after the drain. */
export async function buildReport(i: ReportInput) {
  const runs = await readRuns(i.pool, i.schedules.map((s) => s.id));
  const slots = checkSlots(i.schedules, runs, i.cutAt);
  const timedList = i.timedSchedules ?? [];
  const timedRuns = await readRuns(i.pool, timedList.map((s) => s.id));
  const timing = checkTimed(timedList, timedRuns, { cutAt: i.cutAt, boundaryMs: i.statedBoundMs, unsure: i.timedUnsure ?? [], slackMs: 1000 });
  const { health } = i;
  const fencing = await readFencing(i.pool);
  const starts = await readDuplicateStarts(i.pool);
  const lostAcks = await countLostAcks(i.pool, i.calls);
  // The live part of each unfinished run (run_queue) agrees with its record (runs) after the drain.
  const queue = await findQueueMismatches(createDb(i.pool));
  // A paused schedule's runs wait for the resume on purpose: their lag measures the pause, not us.
  // So do the timing schedules' (paused, and run late on purpose by catch-up "all").
  const paused = new Set([...i.schedules.filter((s) => s.optionalWindows.length > 0).map((s) => s.name), ...timedList.map((s) => s.name)]);
  const allow = timedAllowances(i.timed, i.leaseMs, i.clockOffsetMs);
  // Lags in real time: from the instant the database clock first read the slot's due time (a
  // forward step makes the instants it skips due at once) to its lowest attempt's claim, on the
  // server's real clock: a step is not a wait, and a step back does not make a wait shorter.
  // The stretches when no worker could claim (every one dead, frozen, cut off or starting), on
  // the server's clock: a wait across one is judged from its end (scripts/chaos/fleet-down.ts).
  const fleetDown = fleetDownIntervals(workerUpIntervals(readWorkerStarts(i.logDir, i.skewMs), i.faults.faults, Date.now()), i.workersUpAt, Date.now()).map(
    ([a, z]) => [a + i.clockOffsetMs, z + i.clockOffsetMs] as [number, number],
  );
  const lagRows = (await readFirstStarts(i.pool))
    .filter((l) => !paused.has(l.schedule))
    .map((l) => {
      const dueReal = allow.dueReal(l.dueAt);
      return { ...l, dueReal, lag: l.startedAt - dueReal, judgedLag: l.startedAt - waitJudgedFrom(fleetDown, dueReal, l.startedAt) };
    });
  const lags = lagRows.map((l) => l.lag);
  const worstLags = [...lagRows].sort((a, b) => b.lag - a.lag).slice(0, 3).map((l) => ({ schedule: l.schedule, due_at: new Date(l.dueAt).toISOString(), lag_ms: Math.round(l.lag) }));

  // Recovery: from the kill (or freeze) to the next attempt of each run the victim held.
  const held = i.faults.faults.flatMap((f) => f.held.map((h) => ({ ...h, at: f.at, kind: f.kind })));
  const takeovers = await readTakeovers(i.pool, held);
  // The takeover bound is lease + poll interval. The tolerance covers what the observer adds: the
  // kill is timestamped by this process just before the signal, a poll period runs from the end
  // of the previous pass, and the claim statement itself takes time on a loaded 2-core box.
  const boundMs = i.leaseMs + i.pollMs;
  const toleranceMs = 500;
  // No takeover can happen while the database is down, and the workers' loops come back from an
  // outage through their back-off: a fault whose takeover window overlaps an outage or the stated
  // allowance after it (a churn kill a second before a crash, a SIGTERM just after a failover's
  // first claim) gets the outage and the allowance added to its bound, as a slot's start does
  // (docs/schedules.md#worst-case-lateness). Other samples keep the plain bound.
  const outageEvents = [...i.faults.dbRestarts, ...(i.failovers ?? [])];
  // A lease taken while a forward clock step lasted ends a step later in real time
  // (recoveryExtraMs), and the takeover window it makes can reach an outage after it.
  const outageExtraMs = (at: number) => {
    const clockExtra = allow.recoveryExtraMs(at);
    const reaches = (r: { at: number; tookMs: number }) => r.at < at + boundMs + clockExtra && r.at + r.tookMs + i.outageAllowanceMs > at;
    return outageEvents.reduce((sum, r) => (reaches(r) ? sum + r.tookMs + i.outageAllowanceMs : sum), 0) + clockExtra;
  };
  const recoveries: number[] = [];
  let overBound = 0;
  let overBoundPlusTolerance = 0;
  let duringOutage = 0;
  let finishedBeforeFault = 0;
  let unrecovered = 0;
  const slowRecoveries: { run: number; attempt: number; fault: string; at: string; took_ms: number; after_lease_ran_out_ms?: number; allowed_ms: number }[] = [];
  for (const h of held) {
    const t = takeovers.get(`${h.runId}:${h.attempt}`);
    // A takeover is a next attempt after the victim's lost its lease, or was released on shutdown.
    // An attempt the victim ended itself (failed, timed out, succeeded) is followed by its retry
    // policy's back-off or nothing: no takeover to time.
    const takenOver = t?.finishedBy === "lease_expired" || t?.finishedBy === "aborted" || (t?.finishedBy === null && t.takeoverAt !== null);
    if (t?.takeoverAt && takenOver) {
      // The takeover's claim on the server's real clock, the fault on this process's. A silenced
      // worker is alive: it may renew once more on a connection it opened after the silence began,
      // before its heartbeat draws a silent one and waits out the query timeout. So its takeovers
      // count from when the lease it held last ran out (the database's record of the lost attempt,
      // read in real time): the next poll interval, as for any other expired lease.
      const silent = h.kind === "silent" && t.leaseExpiredAt !== null;
      const took = t.takeoverAt - (h.at + i.clockOffsetMs);
      const from = silent ? allow.dueReal(t.leaseExpiredAt!) : h.at + i.clockOffsetMs;
      const bound = silent ? i.pollMs : boundMs;
      const extra = outageExtraMs(h.at);
      if (extra > 0) duringOutage++;
      recoveries.push(took);
      if (t.takeoverAt - from > bound + extra) overBound++;
      if (t.takeoverAt - from > bound + extra + toleranceMs) {
        overBoundPlusTolerance++;
        slowRecoveries.push({ run: h.runId, attempt: h.attempt, fault: h.kind, at: new Date(h.at).toISOString(), took_ms: Math.round(took), ...(silent ? { after_lease_ran_out_ms: Math.round(t.takeoverAt - from) } : {}), allowed_ms: bound + extra + toleranceMs });
      }
    } else if (t?.finishedBy) finishedBeforeFault++; // ended by its own worker (succeeded, failed, timed out): no takeover
    else unrecovered++;
  }
  const attemptViolations = fencing.attempts_out_of_range + fencing.attempt_gaps + fencing.double_success + fencing.ledger_token_above_run;
  const staleAccepted = fencing.stale_ledger_writes + fencing.stale_finishes;

  const off = i.clockOffsetMs;
  // Outage windows on the server's real clock: down, back, and the stated allowance after it. A
  // forward step of the database clock is an outage of no length: every slot of the interval it
  // skips comes due at once and every lease ends at once, as after an outage as long as the step
  // (docs/faults.md), so it gets the same allowance.
  const forwardSteps = (i.timed?.clockSteps ?? []).filter((c) => c.stepMs > 0).map((c) => ({ at: c.at, tookMs: 0 }));
  const outages = [...outageEvents, ...forwardSteps].map((r) => [r.at + off, r.at + off + r.tookMs + i.outageAllowanceMs] as const);
  const inOutage = (t0: number, t1: number) => outages.some(([a, z]) => t0 <= z && t1 >= a);

  // The witness: requests that reached the outside world, against the attempts the database recorded.
  const witnessedIds = new Set(i.witness.scheduleIds);
  const history = await readAttemptHistory(i.pool, [...witnessedIds, ...i.schedules.map((x) => x.id)]);
  const witnessAttempts = history.filter((h) => witnessedIds.has(h.scheduleId)).map((h) => ({ key: keyOf(h.scheduleId, h.scheduledFor), token: h.attempt, startedAt: h.startedAt, previousOutcome: h.previousOutcome }));
  const names = new Map(i.schedules.map((x) => [x.id, x.name]));
  const requiredWitnessed = runs
    .filter((r) => witnessedIds.has(r.scheduleId) && r.state === "done" && r.origin !== "manual")
    .map((r) => ({ key: keyOf(r.scheduleId, r.scheduledFor), schedule: names.get(r.scheduleId) ?? String(r.scheduleId), slot: r.scheduledFor }));
  const witness = checkWitness(i.witness.hits.map((h) => ({ ...h, at: h.at + off })), witnessAttempts, requiredWitnessed, 250);

  // Starts over the stated bound: the first attempt (database) and, for the http schedules, the
  // first request to arrive (the witness). Slots whose wait overlapped the crash are excluded:
  // the bound is stated for a database that is up, and an outage adds its own allowance.
  const statedMs = i.statedBoundMs;
  const firstArrival = new Map<string, number>();
  for (const h of i.witness.hits) firstArrival.set(h.key, Math.min(firstArrival.get(h.key) ?? Infinity, h.at + off));
  const startsOver: { schedule: string; due_at: string; lag_ms: number; seen_by: string }[] = [];
  let excludedForOutage = 0;
  let excludedBeforeWorkersUp = 0;
  let excludedForFleetDown = 0;
  const upAt = i.workersUpAt + off;
  for (const l of lagRows) {
    if (l.dueReal < upAt) excludedBeforeWorkersUp++;
    else if (inOutage(l.dueReal, l.dueReal + l.lag)) excludedForOutage++;
    else if (l.judgedLag > statedMs) startsOver.push({ schedule: l.schedule, due_at: new Date(l.dueAt).toISOString(), lag_ms: Math.round(l.lag), seen_by: "database" });
    else if (l.lag > statedMs) excludedForFleetDown++;
  }
  // A first attempt whose lease expired (its worker killed, frozen, silenced or cut off: the lease
  // losses are judged below) started in time by the database; its request comes after a takeover.
  const firstLost = new Set(history.filter((h) => h.attempt === 1 && h.outcome === "lease_expired").map((h) => keyOf(h.scheduleId, h.scheduledFor)));
  let excludedFirstAttemptLost = 0;
  for (const r of requiredWitnessed) {
    const at = firstArrival.get(r.key);
    const due = allow.dueReal(r.slot);
    if (at === undefined || due < upAt || inOutage(due, at)) continue;
    const judged = at - waitJudgedFrom(fleetDown, due, at);
    if (judged <= statedMs && at - due > statedMs) {
      excludedForFleetDown++;
      continue;
    }
    if (firstLost.has(r.key) && at - due > statedMs) {
      excludedFirstAttemptLost++;
      continue;
    }
    if (at - due > statedMs) startsOver.push({ schedule: r.schedule, due_at: new Date(r.slot).toISOString(), lag_ms: Math.round(at - due), seen_by: "witness" });
  }

  // Leases lost by workers nothing happened to: every lease_expired attempt must belong to a worker
  // that was killed or frozen while it ran, or overlap the database crash.
  const victimFaults = i.faults.faults.filter((f) => f.kind !== "churn_sigterm");
  const leaseLosses = await readLeaseLosses(i.pool);
  const lostByLive = leaseLosses.filter((l) => {
    const end = l.finishedAt ?? Infinity;
    const hit = victimFaults.some((f) => f.workerId === l.workerId && f.at + off >= l.startedAt - 1000 && f.at + off <= end);
    // Cut off: the claim committed but its answer was lost, so the worker never knew it held the run.
    const cut = i.cutsAfterCommitAt.some((t) => Math.abs(t + off - l.startedAt) <= 1000);
    return !hit && !cut && !inOutage(l.startedAt, end) && !allow.acrossClockStep(l.startedAt, end);
  });

  // Superseded writes accepted: a ledger write that landed when its attempt no longer held the
  // slot's run, in either order. After its successor started (the successor's claim, both on the
  // server's real clock); or before any successor, once its lease had run out (a frozen worker
  // waking up): the harness's trigger read the run's lease as the write landed, and the write must
  // have come from the lease's owner, with its token, while the lease was live.
  const attemptAt = new Map(history.map((h) => [`${keyOf(h.scheduleId, h.scheduledFor)}#${h.attempt}`, h.startedAt]));
  const superseded: { key: string; token: number; worker: string; why: string }[] = [];
  for (const w of await readLedgerWrites(i.pool)) {
    const successor = attemptAt.get(`${w.key}#${w.token + 1}`);
    if (successor !== undefined && w.at > successor + 250) superseded.push({ key: w.key, token: w.token, worker: w.workerId, why: `landed ${Math.round(w.at - successor)} ms after attempt ${w.token + 1} started` });
    else if (w.leaseLive !== true)
      superseded.push({ key: w.key, token: w.token, worker: w.workerId, why: w.holder === null ? "landed when the run was not running" : `landed while ${w.holder} held attempt ${w.holderToken} (lease ${w.leaseLive ? "live" : "expired"})` });
  }
  const longRuns = await readLongRuns(i.pool, i.heartbeatScheduleIds);

  // The faults asked for must have happened, or the checks above proved nothing about them.
  const count = (k: string) => i.faults.faults.filter((f) => f.kind === k).length;
  const timed = await timedReport(i.pool, i.timed, {
    schedules: i.schedules,
    runs,
    lagRows,
    offsetMs: off,
    leaseMs: i.leaseMs,
    pollMs: i.pollMs,
    statedBoundMs: statedMs,
    outageAllowanceMs: i.outageAllowanceMs,
    excluded: (dueReal, lag) => dueReal < upAt || inOutage(dueReal, dueReal + lag),
    judged: (dueReal, lag) => dueReal + lag - waitJudgedFrom(fleetDown, dueReal, dueReal + lag),
  });
  const faultsHappened = {
    kill9_of_busy_worker: i.faults.faults.some((f) => f.kind === "kill9" && f.held.length > 0),
    freeze_past_lease: i.faults.faults.some((f) => f.kind === "sigstop" && f.until !== undefined && f.until - f.at > i.leaseMs),
    churn_restarts: count("churn_kill9") + count("churn_sigterm") > 0,
    db_crash: i.faults.dbRestarts.length > 0,
    connection_cuts: i.proxyCuts > 0,
    runs_kept_alive_by_renewal: longRuns.done > 0 && (longRuns.longest_ms ?? 0) > 3 * i.leaseMs,
    witness_called: witness.requests > 0,
    ...i.moreFaultsHappened,
    ...timed.happened,
  };

  const figures = {
    expected_slots: slots.expectedSlots,
    missing_slots: slots.missingSlots.length,
    duplicate_slots: slots.duplicateSlots.length,
    unexpected_slots: slots.unexpectedSlots.length,
    wrong_final_state: slots.wrongFinalState.length,
    timing_edits: {
      schedules: timedList.length,
      edits: timedList.reduce((n, s) => n + s.edits.length, 0),
      acked: timedList.reduce((n, s) => n + s.edits.filter((e) => e.acked).length, 0),
      expected_slots: timing.expectedSlots,
      missing_slots: timing.missing.length,
      unexpected_slots: timing.unexpected.length,
      duplicate_slots: timing.duplicate.length,
      wrong_final_state: timing.wrongFinalState.length,
      skipped_by_policy_while_live: timing.skippedByPolicy,
      paused_slots_judged: timing.fatesJudged,
      policy_violations: timing.policyViolations.length,
      starts_over_max_lateness: timing.tooLateStarts.length,
      unknown_after_unacked_edit: timing.unknownFrom,
      fates_by_reason: tally(timedRuns.map((r) => (r.state === "skipped" ? `skipped ${r.skipReason}` : `${r.origin} ${r.state}`))),
    },
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
    starts_over_bound: startsOver.length,
    starts_over_bound_detail: { stated_bound_ms: statedMs, excluded_for_db_crash: excludedForOutage, excluded_before_workers_up: excludedBeforeWorkersUp, judged_after_no_worker_was_up: excludedForFleetDown, fleet_down_seconds: Math.round(fleetDown.reduce((n, [a, z]) => n + z - a, 0) / 100) / 10, witness_excluded_first_attempt_lost: excludedFirstAttemptLost, examples: startsOver.slice(0, 5) },
    zombie_requests_after_takeover: witness.zombieRequests.length,
    leases_lost_by_live_workers: lostByLive.length,
    superseded_writes_accepted: superseded.length,
    witness: { requests: witness.requests, slots_seen: witness.slotsSeen, slots_required: requiredWitnessed.length, missing: witness.missing.length, unexplained_repeats: witness.unexplainedRepeats.length },
    leases_lost: { total: leaseLosses.length, by_live_workers: lostByLive.length },
    heartbeat_runs: { done: longRuns.done, longest_ms: longRuns.longest_ms === null ? null : Math.round(longRuns.longest_ms), lease_ms: i.leaseMs },
    ...timed.figures,
    faults_happened: faultsHappened,
    start_lag_ms: { excludes_paused_schedules: [...paused], samples: lags.length, p50: round(quantile(lags, 0.5)), p99: round(quantile(lags, 0.99)), max: round(quantile(lags, 1)), worst: worstLags },
  };
  const checks: Record<string, boolean> = {
    missing_slots: figures.missing_slots === 0,
    duplicate_slots: figures.duplicate_slots === 0,
    unexpected_slots: figures.unexpected_slots === 0,
    wrong_final_state: figures.wrong_final_state === 0,
    timing_slots_follow_edits: timing.missing.length + timing.unexpected.length + timing.duplicate.length + timing.wrongFinalState.length === 0 && (timedList.length === 0 || timing.expectedSlots > 0),
    timing_catch_up_policies_honoured: timing.policyViolations.length === 0,
    timing_starts_within_max_lateness: timing.tooLateStarts.length === 0,
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
    starts_within_stated_bound: startsOver.length === 0,
    witness_saw_every_slot: witness.missing.length === 0,
    no_zombie_requests_after_takeover: witness.zombieRequests.length === 0,
    witness_repeats_explained: witness.unexplainedRepeats.length === 0,
    no_leases_lost_by_live_workers: lostByLive.length === 0,
    no_superseded_writes_accepted: superseded.length === 0,
    ...timed.checks,
    faults_happened: Object.values(faultsHappened).every(Boolean),
  };
  const examples = {
    missing: slots.missingSlots.slice(0, 5),
    duplicate: slots.duplicateSlots.slice(0, 5),
    unexpected: slots.unexpectedSlots.slice(0, 5),
    wrong_final_state: slots.wrongFinalState.slice(0, 5),
    timing: { missing: timing.missing.slice(0, 5), unexpected: timing.unexpected.slice(0, 5), duplicate: timing.duplicate.slice(0, 5), wrong_final_state: timing.wrongFinalState.slice(0, 5), policy: timing.policyViolations.slice(0, 5), too_late_starts: timing.tooLateStarts.slice(0, 5) },
    lost_acks: lostAcks.slice(0, 5),
    witness_missing: witness.missing.slice(0, 5),
    zombie_requests: witness.zombieRequests.slice(0, 5),
    unexplained_repeats: witness.unexplainedRepeats.slice(0, 5),
    leases_lost_by_live_workers: lostByLive.slice(0, 5),
    slow_recoveries: slowRecoveries.slice(0, 5),
    superseded_writes: superseded.slice(0, 5),
  };
  return { figures, checks, examples };
}

function tally(items: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of items) out[x] = (out[x] ?? 0) + 1;
  return out;
}
