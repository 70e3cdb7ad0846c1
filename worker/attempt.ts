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

/**
 * Run one claimed attempt's handler and turn whatever happened into a RunResult. Never throws:
 * an unknown handler, a thrown error and an abort all become results. Once the signal has fired,
 * a late success is not reported as one (promise: past its deadline the worker commits no success).
 */
export async function runAttempt(
  run: ClaimedRun,
  deps: { registry: HandlerRegistry; workerId: string; log: Logger; abort: AttemptAbort },
): Promise<{ result: RunResult; durationMs: number }> {
  const started = performance.now();
  const { abort } = deps;
  const finish = (r: Omit<RunResult, "id" | "attempt" | "scheduleId" | "durationMs">) => {
    const durationMs = Math.round(performance.now() - started);
    return { result: { id: run.id, attempt: run.attempt, scheduleId: run.scheduleId, durationMs, ...r }, durationMs };
  };
  const fromAbort = () => {
    const reason = abort.reason!;
    return finish({ outcome: reason.kind === "shutdown" ? "aborted" : "timed_out", error: reason.message });
  };
  try {
    const handler = deps.registry.get(run.handler);
    let log: Logger | undefined;
    const ctx: HandlerContext = {
      schedule: { id: run.scheduleId, name: run.scheduleName },
      slot: run.scheduledFor,
      // Getters, like log: made only for a handler that reads them.
      get idempotencyKey() {
        return idempotencyKey(run.scheduleId, run.scheduledFor, run.origin, run.id);
      },
      fencingToken: run.attempt,
      attempt: run.attempt,
      runId: run.id,
      origin: run.origin,
      // Secrets may live in the worker's environment rather than the stored payload.
      payload: resolveEnvRefs(run.payload),
      get signal() {
        return abort.signal;
      },
      // Made on first use: a pino child serialises its bindings at once, a cost per run at the top
      // of the hour for handlers that never log.
      get log() {
        return (log ??= deps.log.child({ runId: run.id, schedule: run.scheduleName, slot: run.scheduledFor.toISOString(), attempt: run.attempt }));
      },
      workerId: deps.workerId,
    };
    // A handler that throws before returning its promise lands in the catch below, as a rejection would.
    await abort.race(Promise.resolve(handler.run(ctx)));
    if (abort.aborted) return fromAbort();
    return finish({ outcome: "succeeded" });
  } catch (err) {
    if (abort.aborted) return fromAbort();
    const message = err instanceof Error ? `${err.name === "Error" ? "" : `${err.name}: `}${err.message}` : String(err);
    if (isNonRetryable(err)) return finish({ outcome: "failed", error: message, nonRetryable: true });
    return finish({ outcome: "failed", error: message, retryDelaySeconds: backoffSeconds(run.retry, Math.max(1, run.attempt)) });
  }
}
