import { performance } from "node:perf_hooks";
import { isNonRetryable, type HandlerContext } from "../lib/handlers/types";
import { abortReason } from "../lib/handlers/wait";
import type { Logger } from "../lib/log";
import { backoffSeconds } from "../lib/runs/backoff";
import type { ClaimedRun } from "../lib/runs/claim";
import type { RunResult } from "../lib/runs/finish";
import { idempotencyKey } from "../lib/runs/idempotency";
import { resolveEnvRefs } from "../lib/security/mask";
import type { HandlerRegistry } from "./handlers/registry";

/** Why the worker aborted an attempt's signal. */
export type AbortKind = "deadline" | "lease_lost" | "shutdown";

/** The reason given to an attempt's AbortController: which of the worker's limits fired. */
export class AttemptAborted extends Error {
  constructor(
    readonly kind: AbortKind,
    message: string,
  ) {
    super(message);
    this.name = "AttemptAborted";
  }
}

/**
 * Run one claimed attempt's handler and turn whatever happened into a RunResult. Never throws:
 * an unknown handler, a thrown error and an abort all become results. Once the signal has fired,
 * a late success is not reported as one (promise: past its deadline the worker commits no success).
 */
export async function runAttempt(
  run: ClaimedRun,
  deps: { registry: HandlerRegistry; workerId: string; log: Logger; signal: AbortSignal },
): Promise<{ result: RunResult; durationMs: number }> {
  const started = performance.now();
  const { signal } = deps;
  const finish = (r: Omit<RunResult, "id" | "attempt" | "durationMs">) => {
    const durationMs = Math.round(performance.now() - started);
    return { result: { id: run.id, attempt: run.attempt, durationMs, ...r }, durationMs };
  };
  const fromAbort = () => {
    const reason = abortReason(signal);
    const kind = reason instanceof AttemptAborted ? reason.kind : "deadline";
    return finish({ outcome: kind === "shutdown" ? "aborted" : "timed_out", error: reason.message });
  };
  try {
    const handler = deps.registry.get(run.handler);
    let log: Logger | undefined;
    const ctx: HandlerContext = {
      schedule: { id: run.scheduleId, name: run.scheduleName },
      slot: run.scheduledFor,
      idempotencyKey: idempotencyKey(run.scheduleId, run.scheduledFor, run.origin, run.id),
      fencingToken: run.attempt,
      attempt: run.attempt,
      runId: run.id,
      origin: run.origin,
      // Secrets may live in the worker's environment rather than the stored payload.
      payload: resolveEnvRefs(run.payload),
      signal,
      // Made on first use: a pino child serialises its bindings at once, a cost per run at the top
      // of the hour for handlers that never log.
      get log() {
        return (log ??= deps.log.child({ runId: run.id, schedule: run.scheduleName, slot: run.scheduledFor.toISOString(), attempt: run.attempt }));
      },
      workerId: deps.workerId,
    };
    await untilAborted(Promise.resolve().then(() => handler.run(ctx)), signal);
    if (signal.aborted) return fromAbort();
    return finish({ outcome: "succeeded" });
  } catch (err) {
    if (signal.aborted) return fromAbort();
    const message = err instanceof Error ? `${err.name === "Error" ? "" : `${err.name}: `}${err.message}` : String(err);
    if (isNonRetryable(err)) return finish({ outcome: "failed", error: message, nonRetryable: true });
    return finish({ outcome: "failed", error: message, retryDelaySeconds: backoffSeconds(run.retry, Math.max(1, run.attempt)) });
  }
}

/** Settle with `work`, or reject as soon as `signal` aborts, whichever comes first (a handler that ignores its signal is not waited for). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortReason(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}
