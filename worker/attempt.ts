import { performance } from "node:perf_hooks";
import { isNonRetryable, type HandlerContext } from "../lib/handlers/types";
import type { Logger } from "../lib/log";
import { backoffSeconds } from "../lib/runs/backoff";
import type { ClaimedRun } from "../lib/runs/claim";
import type { RunResult } from "../lib/runs/finish";
import { idempotencyKey } from "../lib/runs/idempotency";
import { resolveEnvRefs } from "../lib/security/mask";
import type { AttemptAbort } from "./attempt-abort";
import type { HandlerRegistry } from "./handlers/registry";

type AttemptDeps = { registry: HandlerRegistry; workerId: string; log: Logger; abort: AttemptAbort };

/**
 * What a handler is given. A class rather than an object literal with getters: at the top of the
 * hour a worker makes one per run, and the getters (idempotency key, signal, logger, each made only
 * when read) live once on the prototype instead of as closures on every context.
 */
class AttemptContext implements HandlerContext {
  readonly schedule: { id: number; name: string };
  readonly slot: Date;
  readonly fencingToken: number;
  readonly attempt: number;
  readonly runId: number;
  readonly origin: ClaimedRun["origin"];
  readonly workerId: string;
  private logger?: Logger;

  constructor(
    private readonly run: ClaimedRun,
    private readonly deps: AttemptDeps,
    // Secrets may live in the worker's environment rather than the stored payload.
    readonly payload: unknown,
  ) {
    this.schedule = { id: run.scheduleId, name: run.scheduleName };
    this.slot = run.scheduledFor;
    this.fencingToken = run.attempt;
    this.attempt = run.attempt;
    this.runId = run.id;
    this.origin = run.origin;
    this.workerId = deps.workerId;
  }

  get idempotencyKey(): string {
    return idempotencyKey(this.run.scheduleId, this.run.scheduledFor, this.run.origin, this.run.id);
  }

  get signal(): AbortSignal {
    return this.deps.abort.signal;
  }

  // Made on first use: a pino child serialises its bindings at once, a cost per run for handlers that never log.
  get log(): Logger {
    const { run } = this;
    return (this.logger ??= this.deps.log.child({ runId: run.id, schedule: run.scheduleName, slot: run.scheduledFor.toISOString(), attempt: run.attempt }));
  }
}

/** What an attempt came to: the result to write and how long the handler took. */
export type Attempted = { result: RunResult; durationMs: number };

function result(run: ClaimedRun, started: number, r: Omit<RunResult, "id" | "attempt" | "scheduleId" | "durationMs">): Attempted {
  const durationMs = Math.round(performance.now() - started);
  return { result: { id: run.id, attempt: run.attempt, scheduleId: run.scheduleId, durationMs, ...r }, durationMs };
}

function succeeded(run: ClaimedRun, started: number): Attempted {
  const durationMs = Math.round(performance.now() - started);
  return { result: { id: run.id, attempt: run.attempt, scheduleId: run.scheduleId, durationMs, outcome: "succeeded" }, durationMs };
}

function aborted(run: ClaimedRun, started: number, abort: AttemptAbort) {
  const reason = abort.reason!;
  return result(run, started, { outcome: reason.kind === "shutdown" ? "aborted" : "timed_out", error: reason.message });
}

function failed(run: ClaimedRun, started: number, abort: AttemptAbort, err: unknown) {
  if (abort.aborted) return aborted(run, started, abort);
  const message = err instanceof Error ? `${err.name === "Error" ? "" : `${err.name}: `}${err.message}` : String(err);
  if (isNonRetryable(err)) return result(run, started, { outcome: "failed", error: message, nonRetryable: true });
  return result(run, started, { outcome: "failed", error: message, retryDelaySeconds: backoffSeconds(run.retry, Math.max(1, run.attempt)) });
}

const isThenable = (v: unknown): v is PromiseLike<unknown> => typeof v === "object" && v !== null && typeof (v as { then?: unknown }).then === "function";

async function settle(run: ClaimedRun, started: number, abort: AttemptAbort, returned: PromiseLike<unknown>): Promise<Attempted> {
  try {
    await abort.race(Promise.resolve(returned));
  } catch (err) {
    return failed(run, started, abort, err);
  }
  if (abort.aborted) return aborted(run, started, abort);
  return succeeded(run, started);
}

/**
 * Run one claimed attempt's handler and turn whatever happened into a RunResult. Never throws nor
 * rejects: an unknown handler, a thrown error and an abort all become results. Once the signal has
 * fired, a late success is not reported as one (promise: past its deadline the worker commits no
 * success). A handler that returns without a promise (a synchronous one) is done at once, and so
 * is this: the result comes back as a value, with no promise made and no turn of the event loop
 * waited (a cost per run at the top of the hour); otherwise it comes as a promise.
 */
export function runAttempt(run: ClaimedRun, deps: AttemptDeps): Attempted | Promise<Attempted> {
  const started = performance.now();
  const { abort } = deps;
  let returned: unknown;
  try {
    const handler = deps.registry.get(run.handler);
    returned = handler.run(new AttemptContext(run, deps, resolveEnvRefs(run.payload)));
  } catch (err) {
    // A handler that throws before returning its promise fails as a rejection would.
    return failed(run, started, abort, err);
  }
  if (isThenable(returned)) return settle(run, started, abort, returned);
  if (abort.aborted) return aborted(run, started, abort);
  return succeeded(run, started);
}
