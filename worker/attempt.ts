import { performance } from "node:perf_hooks";
import { isNonRetryable, type HandlerContext } from "../lib/handlers/types";
import type { Logger } from "../lib/log";
import { backoffSeconds } from "../lib/runs/backoff";
import type { ClaimedRun } from "../lib/runs/claim";
import type { RunResult } from "../lib/runs/finish";
import { idempotencyKey } from "../lib/runs/idempotency";
import { resolveEnvRefs } from "../lib/security/mask";
import type { AttemptOutput } from "../lib/runs/output";
import type { AttemptAbort } from "./attempt-abort";
import { ATTEMPT_STREAMS, AttemptOutputCollector, type AttemptStreams } from "./attempt-output";
import type { HandlerRegistry } from "./handlers/registry";

/** What every attempt of a worker shares: made once per worker, not once per run. */
export type AttemptDeps = { registry: HandlerRegistry; workerId: string; log: Logger };

/**
 * What a handler is given. A class rather than an object literal with getters: at the top of the
 * hour a worker makes one per run, and the getters (idempotency key, signal, logger, each made only
 * when read) live once on the prototype instead of as closures on every context.
 */
class AttemptContext implements HandlerContext {
  readonly fencingToken: number;
  readonly attempt: number;
  readonly runId: number;
  readonly origin: ClaimedRun["origin"];
  readonly workerId: string;
  private logger?: Logger;
  private collector?: AttemptOutputCollector;
  private scheduleRef?: { id: number; name: string };
  private resolved = false;
  private resolvedPayload: unknown = undefined;

  constructor(
    private readonly run: ClaimedRun,
    private readonly deps: AttemptDeps,
    private readonly abort: AttemptAbort,
  ) {
    this.fencingToken = run.attempt;
    this.attempt = run.attempt;
    this.runId = run.id;
    this.origin = run.origin;
    this.workerId = deps.workerId;
  }

  /**
   * The payload, with its `{ "$env": NAME }` references resolved (secrets may live in the worker's
   * environment rather than the stored payload), parsed and resolved on first read: a handler that
   * never reads it (a no-op) costs no object. A payload that may hold a reference is resolved
   * before the handler is called (runAttempt), so an unset variable fails the attempt whether or
   * not the handler reads its payload.
   */
  get payload(): unknown {
    if (!this.resolved) {
      this.resolvedPayload = resolveEnvRefs(this.run.payload);
      this.resolved = true;
    }
    return this.resolvedPayload;
  }

  // Read from the run when asked: its Date is made only then (see GroupRun in lib/runs/claim/answer.ts).
  get slot(): Date {
    return this.run.scheduledFor;
  }

  get schedule(): { id: number; name: string } {
    return (this.scheduleRef ??= { id: this.run.scheduleId, name: this.run.scheduleName });
  }

  get idempotencyKey(): string {
    return idempotencyKey(this.run.scheduleId, this.run.scheduledFor, this.run.origin, this.run.id);
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  // Made on first use: a pino child serialises its bindings at once, a cost per run for handlers
  // that never log. What it writes goes to the worker's log and into the attempt's output.
  get log(): Logger {
    const { run } = this;
    return (this.logger ??= this.output().capture(this.deps.log.child({ runId: run.id, schedule: run.scheduleName, slot: run.scheduledFor.toISOString(), attempt: run.attempt })));
  }

  /** The attempt's stdout and stderr, for a built-in that runs a program (the `command` handler). */
  get [ATTEMPT_STREAMS](): AttemptStreams {
    return this.output().attemptStreams();
  }

  private output(): AttemptOutputCollector {
    // The secrets to mask come from the payload as stored, before its references were resolved.
    return (this.collector ??= new AttemptOutputCollector(() => this.run.payload));
  }

  /**
   * What the attempt leaves, with `returned` (the handler's value) as its result; undefined when it
   * logged nothing, ran no program and returned nothing, so such a result carries no output.
   */
  outputWith(returned: unknown): AttemptOutput | undefined {
    if (!this.collector) {
      if (returned === undefined || returned === null) return undefined;
      this.output();
    }
    return this.collector!.finish(returned);
  }
}

// The result carries where the queue row is (queueTid) from the start: the runner refreshes it
// before the finish (a renewal may move the row), and an object keeps its shape when a property is
// overwritten but not when one is added (a new property is a second allocation per run).
function result(run: ClaimedRun, started: number, r: Omit<RunResult, "id" | "attempt" | "scheduleId" | "durationMs" | "queueTid">): RunResult {
  return { id: run.id, attempt: run.attempt, scheduleId: run.scheduleId, queueTid: run.queueTid, durationMs: Math.round(performance.now() - started), ...r };
}

// `output` is in the literal even when undefined (nearly always, at the top of the hour), so every
// success result has one shape.
function succeeded(run: ClaimedRun, started: number, output: AttemptOutput | undefined): RunResult {
  return { id: run.id, attempt: run.attempt, scheduleId: run.scheduleId, queueTid: run.queueTid, durationMs: Math.round(performance.now() - started), outcome: "succeeded", output };
}

function aborted(run: ClaimedRun, started: number, abort: AttemptAbort, ctx: AttemptContext | undefined) {
  const reason = abort.reason!;
  const output = ctx?.outputWith(undefined);
  // Past the schedule's timeoutSeconds the attempt failed: retried after the schedule's backoff, like any failure.
  if (reason.kind === "timeout") return result(run, started, { outcome: "timed_out", error: reason.message, retryDelaySeconds: backoffSeconds(run.retry, Math.max(1, run.attempt)), output });
  return result(run, started, { outcome: reason.kind === "shutdown" ? "aborted" : "timed_out", error: reason.message, output });
}

/**
 * A handler's own time limit (the `command` handler's payload.timeoutSeconds) throws an error named
 * TimeoutError, as AbortSignal.timeout() does: the attempt is recorded `timed_out` and retried.
 */
const isTimeout = (err: unknown) => err instanceof Error && err.name === "TimeoutError";

function failed(run: ClaimedRun, started: number, abort: AttemptAbort, err: unknown, ctx: AttemptContext | undefined) {
  if (abort.aborted) return aborted(run, started, abort, ctx);
  const message = err instanceof Error ? `${err.name === "Error" ? "" : `${err.name}: `}${err.message}` : String(err);
  const output = ctx?.outputWith(undefined);
  if (isNonRetryable(err)) return result(run, started, { outcome: "failed", error: message, nonRetryable: true, output });
  return result(run, started, { outcome: isTimeout(err) ? "timed_out" : "failed", error: message, retryDelaySeconds: backoffSeconds(run.retry, Math.max(1, run.attempt)), output });
}

const isThenable = (v: unknown): v is PromiseLike<unknown> => typeof v === "object" && v !== null && typeof (v as { then?: unknown }).then === "function";

async function settle(run: ClaimedRun, started: number, abort: AttemptAbort, ctx: AttemptContext, returned: PromiseLike<unknown>): Promise<RunResult> {
  let value: unknown;
  try {
    value = await abort.race(Promise.resolve(returned));
  } catch (err) {
    return failed(run, started, abort, err, ctx);
  }
  if (abort.aborted) return aborted(run, started, abort, ctx);
  return succeeded(run, started, ctx.outputWith(value));
}

/**
 * Run one claimed attempt's handler and turn whatever happened into a RunResult. Its durationMs is
 * how long the handler took, from `started`: the runner passes the instant its timeout counts from,
 * so an attempt timed out after timeoutSeconds never reports a shorter duration. Never throws nor
 * rejects: an unknown handler, a thrown error and an abort all become results. Once the signal has
 * fired, a late success is not reported as one (promise: past its deadline the worker commits no
 * success). A handler that returns without a promise (a synchronous one) is done at once, and so
 * is this: the result comes back as a value, with no promise made and no turn of the event loop
 * waited (a cost per run at the top of the hour); otherwise it comes as a promise.
 */
export function runAttempt(run: ClaimedRun, deps: AttemptDeps, abort: AttemptAbort, started = performance.now()): RunResult | Promise<RunResult> {
  // Aborted before it began (the runner found the lease deadline already passed): never called.
  if (abort.aborted) return aborted(run, started, abort, undefined);
  let returned: unknown;
  let ctx: AttemptContext | undefined;
  try {
    const handler = deps.registry.get(run.handler);
    ctx = new AttemptContext(run, deps, abort);
    if (run.payloadRefersToEnv !== false) void ctx.payload;
    returned = handler.run(ctx);
  } catch (err) {
    // A handler that throws before returning its promise fails as a rejection would.
    return failed(run, started, abort, err, ctx);
  }
  if (isThenable(returned)) return settle(run, started, abort, ctx, returned);
  if (abort.aborted) return aborted(run, started, abort, ctx);
  return succeeded(run, started, ctx.outputWith(returned));
}
