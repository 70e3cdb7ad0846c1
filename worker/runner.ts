import { performance } from "node:perf_hooks";
import type { Db } from "../lib/db/client";
import type { Logger } from "../lib/log";
import type { WorkerMetrics } from "../lib/metrics/worker-metrics";
import { adoptUnansweredClaims, claimRunsDetailed, rescueGateMs, type ClaimedRun } from "../lib/runs/claim";
import { finishRuns, type AttemptLateness, type RunResult } from "../lib/runs/finish";
import { heartbeatRuns } from "../lib/runs/lease";
import type { SweepPartition } from "../lib/partitions/sweep";
import { nextDueInMs } from "../lib/runs/next-due";
import { runAttempt, type AttemptDeps } from "./attempt";
import { AttemptAbort, AttemptAborted, type AbortKind } from "./attempt-abort";
import type { HandlerRegistry } from "./handlers/registry";
import { createPartitionSettler } from "./settle";

export type RunnerOptions = {
  db: Db;
  log: Logger;
  workerId: string;
  registry: HandlerRegistry;
  /** Handlers it runs at once in all; with `queues`, their sum. */
  concurrency: number;
  /** The queues it claims in, each with its own concurrency; unset: `{ default: concurrency }`. */
  queues?: Readonly<Record<string, number>>;
  claimBatchSize: number;
  /** Stop committing this long before the lease would run out (at most a third of the lease). */
  leaseSafetyMarginMs: number;
  /** Which partitions to claim in; null = all. The one place that decides. */
  partitions: () => number[] | null;
  /** Partitions whose holder lacks some of this worker's handlers or queues (lib/partitions/sweep.ts): claimed in after `partitions`. */
  sweep?: () => readonly SweepPartition[];
  /**
   * At most this often a claim also looks for expired leases (the poll interval): a claim pass
   * right after another one, as in a spike, skips that look.
   */
  rescueIntervalMs?: number;
  /** Called when a slot frees up, so the claim loop can take more work at once. */
  onSlotFree?: () => void;
  /** Settle partitions before this worker's first claim there (worker/settle.ts): the lateness pass over their due runs. */
  settle?: (partitions: number[]) => Promise<unknown>;
  /** A partition out of the claimed set for longer than this is settled again when it comes back (default 0: always). */
  settleAfterAbsenceMs?: number;
  /** This process's counters and histograms (claims, starts, finishes, lateness). */
  metrics?: WorkerMetrics;
};

/**
 * A run this worker holds. It is its attempt's abort switch too: one object per in-flight run
 * rather than two. A spike keeps a thousand of them alive across young-generation collections, and
 * every object that survives one is copied, and most are promoted (`--trace-gc-nvp`).
 */
class InFlight extends AttemptAbort {
  /** Set once the handler is done and its result waits to be written. */
  result: RunResult | undefined = undefined;

  constructor(
    readonly run: ClaimedRun,
    readonly leaseMs: number,
    readonly marginMs: number,
    /** performance.now() when the last successful renewal (or the claim) was SENT: the lease began no earlier. */
    public renewedSentAt: number,
    /** performance.now() past which the schedule's timeoutSeconds aborts the attempt (Infinity: no timeout). */
    readonly timeoutAt: number,
  ) {
    super();
  }
}

/**
 * At most this many results per finish statement. Results that pile up while a finish is under way
 * go together in the next one (fewer statements when claims run ahead of finishes, as in a spike),
 * but one statement holds its rows' locks until it commits, so a batch is capped.
 */
export const FINISH_BATCH_MAX = 1000;

/**
 * The worker's in-flight runs: claims them up to the concurrency limit, runs their handlers, renews
 * their leases in bulk, enforces each one's local deadline and its schedule's timeout on the
 * monotonic clock, and writes their
 * results in bulk, fenced on the token.
 */
export function createRunner(o: RunnerOptions) {
  const inFlight = new Map<number, InFlight>();
  const finishQueue: InFlight[] = [];
  let flushing: Promise<void> | null = null;
  let flushRetryTimer: NodeJS.Timeout | undefined;
  let drained: (() => void) | undefined;
  let lastRescueAt = -Infinity;
  // Runs of exclusive schedules (overlap forbid or skip) are asked for on every pass while there
  // are some, otherwise once per poll interval.
  let lastExclusiveAt = -Infinity;
  let exclusiveSeen = true;
  // When a claim pass last filled every slot it asked for: due runs are waiting (a backlog).
  let lastFullClaimAt = -Infinity;
  // A claim pass failed: a claim may have committed and lost its answer (lib/runs/claim/adopt.ts).
  let answerMaybeLost = false;
  // Attempts let go of without their result written (the database was away past their deadline),
  // until their lease has surely run out: never adopted, their handler has run.
  const letGo = new Map<number, { attempt: number; until: number }>();
  const forgetLetGo = (now: number) => {
    for (const [id, g] of letGo) if (now >= g.until) letGo.delete(id);
  };
  const settler = o.settle ? createPartitionSettler(o.settle, o.settleAfterAbsenceMs ?? 0) : undefined;
  // Per queue: its concurrency and how many of its runs this worker holds.
  const queues = o.queues ?? { default: o.concurrency };
  const held = new Map<string, number>(Object.keys(queues).map((q) => [q, 0]));
  const queueOf = (run: ClaimedRun) => run.queue ?? "default";

  const attemptDeps: AttemptDeps = { registry: o.registry, workerId: o.workerId, log: o.log };
  // Routing: every claim asks only for runs of the handlers this worker has.
  const served = o.registry.list().map((h) => h.name);
  const leaseDeadlineOf = (e: InFlight) => e.renewedSentAt + e.leaseMs - e.marginMs;
  // The earlier of the lease deadline and the schedule's timeout: one timer serves both.
  const deadlineOf = (e: InFlight) => Math.min(leaseDeadlineOf(e), e.timeoutAt);

  // One timer for every in-flight run, armed for the earliest deadline, rather than one per run: a
  // thousand timers at the top of the hour were a cost per run, and renewing moved each of them.
  // When it fires it aborts every run past its deadline and re-arms for the next one; a renewal
  // only moves deadlines later, so the timer may fire early, find nothing due, and re-arm.
  let deadlineTimer: NodeJS.Timeout | undefined;
  let deadlineAt = Infinity;

  function armDeadline(at: number) {
    if (at >= deadlineAt) return;
    clearTimeout(deadlineTimer);
    deadlineAt = at;
    deadlineTimer = setTimeout(checkDeadlines, Math.max(0, at - performance.now()));
  }

  function checkDeadlines() {
    deadlineTimer = undefined;
    deadlineAt = Infinity;
    const now = performance.now();
    let next = Infinity;
    for (const e of inFlight.values()) {
      if (e.aborted || e.result) continue;
      const at = deadlineOf(e);
      if (now >= e.timeoutAt) {
        abort(e, "timeout", `timed out after ${e.run.timeoutSeconds} s (the schedule's timeoutSeconds)`);
      } else if (now >= at) {
        abort(e, "deadline", `lease deadline passed: ${e.leaseMs} ms lease minus ${e.marginMs} ms safety margin since the last renewal was sent`);
      } else if (at < next) next = at;
    }
    if (next < Infinity) armDeadline(next);
  }

  function abort(e: InFlight, kind: AbortKind, message: string) {
    if (e.aborted || e.result) return;
    o.log.warn({ event: `run:abort:${kind}`, runId: e.run.id, attempt: e.run.attempt, message });
    e.abort(new AttemptAborted(kind, message));
  }

  /** Forget a run this worker no longer holds; the caller wakes the claim loop (once per batch, not per run). */
  function release(e: InFlight) {
    if (!inFlight.delete(e.run.id)) return;
    const q = queueOf(e.run);
    held.set(q, (held.get(q) ?? 1) - 1);
    if (inFlight.size === 0) {
      clearTimeout(deadlineTimer);
      deadlineTimer = undefined;
      deadlineAt = Infinity;
      drained?.();
    }
  }

  function start(run: ClaimedRun, sentAt: number) {
    const leaseMs = run.leaseSeconds * 1000;
    const now = performance.now();
    // The timeout and the attempt's duration count from this one instant on the worker's monotonic
    // clock, so an attempt timed out after timeoutSeconds is never recorded as having taken less.
    const timeoutAt = run.timeoutSeconds ? now + run.timeoutSeconds * 1000 : Infinity;
    const e = new InFlight(run, leaseMs, Math.min(o.leaseSafetyMarginMs, Math.floor(leaseMs / 3)), sentAt, timeoutAt);
    inFlight.set(run.id, e);
    const q = queueOf(run);
    held.set(q, (held.get(q) ?? 0) + 1);
    // No handler starts past its lease deadline: a worker paused between sending the claim and
    // reading its answer (SIGSTOP, a swapped-out process) may wake after the lease ran out and
    // another worker took the run over. Its signal would fire at once, but a handler that ignores
    // it would act beside the new holder, so the attempt is given up unrun.
    if (now >= leaseDeadlineOf(e)) abort(e, "deadline", `lease deadline passed before the handler started: ${e.leaseMs} ms lease minus ${e.marginMs} ms safety margin since the claim was sent`);
    else {
      armDeadline(deadlineOf(e));
      o.metrics?.attemptStarted(run.handler);
    }
    const attempted = runAttempt(run, attemptDeps, e, now);
    // A synchronous handler's result is queued at once; runAttempt never rejects.
    if (attempted instanceof Promise) void attempted.then((a) => done(e, a));
    else done(e, attempted);
  }

  function done(e: InFlight, result: RunResult) {
    const { run } = e;
    // Built only when it will be written: at the top of the hour this line is per run.
    if (o.log.isLevelEnabled("info")) {
      o.log.info({
        event: "run:attempt",
        runId: run.id,
        schedule: run.scheduleName,
        scheduleId: run.scheduleId,
        slot: run.scheduledFor.toISOString(),
        attempt: run.attempt,
        workerId: o.workerId,
        outcome: result.outcome,
        durationMs: result.durationMs,
        ...(result.error ? { error: result.error } : {}),
      });
    }
    e.result = result;
    finishQueue.push(e);
    scheduleFlush(0);
  }

  // A batch of results finishing in one tick schedules one flush, not one timer per result. "At
  // once" is setImmediate, which runs after every callback of this turn of the event loop (so it
  // still gathers the batch) but not a timer's 1 ms later: between two finishes of a spike that
  // millisecond was on the path of every batch.
  let flushAt = Infinity;
  let flushSoon: NodeJS.Immediate | undefined;
  function scheduleFlush(delayMs: number) {
    if (flushing || flushSoon !== undefined) return;
    if (delayMs === 0) {
      clearTimeout(flushRetryTimer);
      flushRetryTimer = undefined;
      flushAt = Infinity;
      flushSoon = setImmediate(() => {
        flushSoon = undefined;
        void flush();
      });
      return;
    }
    const at = performance.now() + delayMs;
    if (flushRetryTimer !== undefined && flushAt <= at) return;
    clearTimeout(flushRetryTimer);
    flushAt = at;
    flushRetryTimer = setTimeout(() => {
      flushRetryTimer = undefined;
      void flush();
    }, delayMs);
  }

  /** Write every queued result in one statement; on a database error keep them and retry. */
  function flush(): Promise<void> {
    if (flushing) return flushing;
    if (finishQueue.length === 0) return Promise.resolve();
    const batch = finishQueue.splice(0, FINISH_BATCH_MAX);
    let failed = false;
    flushing = (async () => {
      try {
        // The queue row is where the last renewal left it (a renewal can land after the handler ended).
        for (const e of batch) e.result!.queueTid = e.run.queueTid;
        let lateness: AttemptLateness[] = [];
        const { stale } = await finishRuns(o.db, o.workerId, batch.map((e) => e.result!), { onLateness: (l) => (lateness = l) });
        const staleSet = new Set(stale);
        o.metrics?.resultsWritten(batch.filter((e) => !staleSet.has(e.run.id)).map((e) => e.result!.outcome), lateness, stale.length);
        if (stale.length > 0) {
          for (const e of batch) {
            if (staleSet.has(e.run.id)) {
              o.log.warn({ event: "run:finish:stale", runId: e.run.id, attempt: e.run.attempt, outcome: e.result!.outcome, workerId: o.workerId });
            }
          }
        }
        for (const e of batch) release(e);
        o.onSlotFree?.();
      } catch (err) {
        failed = true;
        // The database is away. Results stay queued (and their leases renewed) until their own
        // deadline passes; then the lease will expire and another worker takes the run over.
        const now = performance.now();
        let freed = false;
        for (const e of batch) {
          if (now >= leaseDeadlineOf(e)) {
            o.log.warn({ event: "run:finish:abandoned", runId: e.run.id, attempt: e.run.attempt, err });
            forgetLetGo(now);
            letGo.set(e.run.id, { attempt: e.run.attempt, until: now + e.leaseMs });
            release(e);
            freed = true;
          } else finishQueue.push(e);
        }
        if (freed) o.onSlotFree?.();
        o.log.warn({ event: "run:finish:error", err, queued: finishQueue.length });
      } finally {
        flushing = null;
      }
      // Results that arrived meanwhile go at once; after a failure, retry in a second.
      if (finishQueue.length > 0) scheduleFlush(failed ? 1000 : 0);
    })();
    return flushing;
  }

  /** Start the runs a failed claim pass may have taken without hearing so (lib/runs/claim/adopt.ts). */
  async function adopt() {
    forgetLetGo(performance.now());
    const known = [...inFlight.values()].map((e) => ({ id: e.run.id, attempt: e.run.attempt }));
    for (const [id, g] of letGo) known.push({ id, attempt: g.attempt });
    const sentAt = performance.now();
    const adopted = await adoptUnansweredClaims(o.db, o.workerId, known);
    answerMaybeLost = false;
    for (const run of adopted) {
      o.log.warn({ event: "run:claim:adopted", runId: run.id, attempt: run.attempt, workerId: o.workerId, message: "a claim's answer was lost; the run is leased to this worker, which runs it now" });
      start(run, sentAt);
    }
  }

  return {
    /** Runs held right now (handlers running or results waiting to be written). */
    get inFlight() {
      return inFlight.size;
    },

    /** Each queue it serves: its concurrency and how many of its runs are held right now. */
    queues(): { name: string; concurrency: number; inFlight: number }[] {
      return Object.entries(queues).map(([name, concurrency]) => ({ name, concurrency, inFlight: held.get(name) ?? 0 }));
    },

    /** Claim as many runs as there are free slots and start their handlers; true when it filled every slot it asked for. */
    async claimPass(): Promise<boolean> {
      if (answerMaybeLost) await adopt();
      // Each queue up to its own free slots (and the batch size).
      const room: Record<string, number> = {};
      let limit = 0;
      for (const [q, n] of Object.entries(queues)) {
        const free = Math.min(n - (held.get(q) ?? 0), o.claimBatchSize);
        if (free > 0) limit += room[q] = free;
      }
      if (limit <= 0) return false;
      const sentAt = performance.now();
      const rescueExpired = sentAt - lastRescueAt >= (o.rescueIntervalMs ?? 0);
      if (rescueExpired) lastRescueAt = sentAt;
      const checkExclusive = exclusiveSeen || sentAt - lastExclusiveAt >= (o.rescueIntervalMs ?? 0);
      if (checkExclusive) lastExclusiveAt = sentAt;
      const partitions = o.partitions();
      await settler?.before(partitions);
      const settledAt = performance.now();
      const sweep = o.sweep?.() ?? null;
      const { claimed, settled, exclusiveFound } = await claimRunsDetailed(o.db, {
        workerId: o.workerId,
        partitions,
        limit,
        rescueExpired,
        rescueGateMs: rescueGateMs(o.rescueIntervalMs),
        checkExclusive,
        handlers: served,
        queues: room,
        // Routing: with slots left after its own partitions, on every pass (a run there is as due
        // as one of its own; an idle pass costs a probe per sweep partition, and there are none
        // where every worker serves alike).
        sweep,
      }).catch((err: unknown) => {
        answerMaybeLost = true;
        throw err;
      });
      settler?.claimed(partitions);
      if (checkExclusive) exclusiveSeen = exclusiveFound > 0;
      o.metrics?.claimPass(claimed.length, settled.map((s) => s.state));
      for (const s of settled) o.log.info({ event: `run:claim:${s.state}`, runId: s.id, workerId: o.workerId });
      // Where a pass spent its time and what it asked for: debug only, it is one line per poll.
      if (o.log.isLevelEnabled("debug")) {
        const now = performance.now();
        o.log.debug({ event: "run:claim:pass", partitions, sweep: sweep?.map((p) => p.partition), limit, claimed: claimed.map((r) => r.id), settleMs: Math.round(settledAt - sentAt), claimMs: Math.round(now - settledAt) });
      }
      for (const run of claimed) start(run, sentAt);
      const full = claimed.length + settled.length >= limit;
      if (full) lastFullClaimAt = performance.now();
      return full;
    },

    /** Milliseconds until the next pending run in this worker's partitions comes due; null when none is ahead or no slot is free. */
    async nextDueInMs(): Promise<number | null> {
      if (inFlight.size >= o.concurrency) return null;
      const own = o.partitions();
      // Sweep partitions too: a run there may be this worker's to start (an early wake otherwise costs one empty pass).
      const parts = own === null ? null : [...new Set([...own, ...(o.sweep?.() ?? []).map((p) => p.partition)])];
      if (parts !== null && parts.length === 0) return null;
      return nextDueInMs(o.db, parts, served, Object.keys(queues));
    },

    /**
     * True while due runs are waiting: a claim pass filled its whole batch within the last
     * `withinMs`. Slots taken by long handlers alone do not count (no claim pass is then full).
     */
    backlogged(withinMs: number): boolean {
      return performance.now() - lastFullClaimAt < withinMs;
    },

    /** Renew, in one statement, every lease due for renewal (a third of its length since the last one). */
    async heartbeatPass(): Promise<void> {
      const now = performance.now();
      const due: InFlight[] = [];
      for (const e of inFlight.values()) if (!e.aborted && now - e.renewedSentAt >= e.leaseMs / 3) due.push(e);
      if (due.length === 0) return;
      const sentAt = performance.now();
      const held = await heartbeatRuns(o.db, o.workerId, due.map((e) => ({ id: e.run.id, scheduleId: e.run.scheduleId, attempt: e.run.attempt, leaseSeconds: e.run.leaseSeconds, queueTid: e.run.queueTid })));
      for (const e of due) {
        if (inFlight.get(e.run.id) !== e) continue;
        const tid = held.get(e.run.id);
        if (tid !== undefined) {
          // Its deadline only moves later: the shared timer re-arms itself when it fires.
          e.renewedSentAt = sentAt;
          e.run.queueTid = tid;
        } else if (!e.result) {
          abort(e, "lease_lost", "lease lost: the heartbeat matched no row (another worker holds a newer token)");
        }
      }
    },

    /** Wait until no run is in flight or `ms` passes; true when drained. */
    async drain(ms: number): Promise<boolean> {
      if (inFlight.size === 0) return true;
      let timer: NodeJS.Timeout | undefined;
      const ok = await Promise.race([
        new Promise<boolean>((r) => (drained = () => r(true))),
        new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms))),
      ]);
      clearTimeout(timer);
      drained = undefined;
      return ok;
    },

    /** Abort every running handler (shutdown): their results release the runs to pending. */
    abortAll(kind: AbortKind, message: string): void {
      for (const e of inFlight.values()) if (!e.result) abort(e, kind, message);
    },

    /** Write whatever results are queued now. */
    flush,
  };
}

export type Runner = ReturnType<typeof createRunner>;
