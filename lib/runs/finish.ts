import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { executePrepared } from "../db/prepared";

/** Longest error text stored on a run or attempt; longer messages are cut with a marker. */
export const MAX_ERROR_LENGTH = 2000;

/** How an attempt ended, as the worker saw it. `aborted` means released on shutdown, not failed. */
export type RunOutcome = "succeeded" | "failed" | "timed_out" | "aborted";

/** One finished attempt to record. */
export type RunResult = {
  id: number;
  /** The fencing token the worker claimed with; the write applies only while it is still current. */
  attempt: number;
  outcome: RunOutcome;
  error?: string | null;
  /** The handler said retrying cannot help (NonRetryableError): dead at once. */
  nonRetryable?: boolean;
  /** Backoff before the next attempt, when the outcome is a failure that may retry. */
  retryDelaySeconds?: number;
  durationMs?: number | null;
};

/** Cut an error message to MAX_ERROR_LENGTH characters. */
export function boundError(message: string | null | undefined): string | null {
  if (message === null || message === undefined) return null;
  return message.length <= MAX_ERROR_LENGTH ? message : `${message.slice(0, MAX_ERROR_LENGTH - 15)}… [truncated]`;
}

/**
 * Record a batch of attempt results in one statement: done, retry (pending after backoff), dead,
 * or released (shutdown), plus an attempts row for each but a first-attempt success. Fencing: a row changes only where this
 * worker still holds the same token; results whose token is stale change nothing and come back
 * in `stale`.
 */
export async function finishRuns(db: Db, workerId: string, results: RunResult[]): Promise<{ applied: number; stale: number[] }> {
  if (results.length === 0) return { applied: 0, stale: [] };
  const ids = results.map((r) => r.id);
  const tokens = results.map((r) => r.attempt);
  const outcomes = results.map((r) => r.outcome);
  const errors = results.map((r) => boundError(r.error));
  const nonRetryable = results.map((r) => r.nonRetryable === true);
  const delays = results.map((r) => Math.max(0, r.retryDelaySeconds ?? 0));
  const durations = results.map((r) => (r.durationMs === null || r.durationMs === undefined ? null : Math.round(r.durationMs)));

  const result = await executePrepared<{ id: number }>(db, "sk_finish", sql`
    WITH results AS (
      SELECT * FROM unnest(${sql.param(ids)}::bigint[], ${sql.param(tokens)}::int[], ${sql.param(outcomes)}::text[],
        ${sql.param(errors)}::text[], ${sql.param(nonRetryable)}::bool[], ${sql.param(delays)}::float8[], ${sql.param(durations)}::int[])
        AS x(id, attempt, outcome, error, non_retryable, delay_seconds, duration_ms)
    ),
    finished AS (
      UPDATE runs r SET
        state = CASE
          WHEN x.outcome = 'succeeded' THEN 'done'
          WHEN x.outcome = 'aborted' THEN 'pending'
          WHEN x.non_retryable OR r.attempts >= r.max_attempts THEN 'dead'
          ELSE 'pending'
        END::run_state,
        -- One clock: the retry becomes claimable at sk_now() + backoff (the delay is a duration).
        -- (SELECT sk_now()) is read once per statement, not once per row (it is not inlinable).
        run_after = CASE
          WHEN x.outcome = 'aborted' THEN (SELECT sk_now())
          WHEN x.outcome <> 'succeeded' AND NOT x.non_retryable AND r.attempts < r.max_attempts
            THEN (SELECT sk_now()) + make_interval(secs => x.delay_seconds)
          ELSE r.run_after
        END,
        -- A shutdown release is not the handler's fault: it does not use up the allowance.
        max_attempts = CASE WHEN x.outcome = 'aborted' THEN greatest(r.max_attempts, r.attempts + 1) ELSE r.max_attempts END,
        finished_at = CASE
          WHEN x.outcome = 'succeeded' OR (x.outcome <> 'aborted' AND (x.non_retryable OR r.attempts >= r.max_attempts)) THEN (SELECT sk_now())
        END,
        last_error = CASE WHEN x.outcome = 'succeeded' THEN NULL ELSE coalesce(x.error, r.last_error) END,
        duration_ms = x.duration_ms,
        lease_owner = NULL,
        lease_expires_at = NULL
      FROM results x
      -- Fencing: only the holder of the current token may finish the run.
      WHERE r.id = x.id AND r.attempts = x.attempt AND r.state = 'running' AND r.lease_owner = ${workerId}
      RETURNING r.id, r.attempts, r.started_at
    ),
    recorded AS (
      -- A first attempt that succeeded stays on the run row (worker_id, started_at, finished_at,
      -- duration_ms; run_attempts reads it from there): no INSERT and no foreign-key check for the
      -- common case. Every other attempt gets its row.
      INSERT INTO attempts (run_id, attempt, worker_id, started_at, finished_at, outcome, error, duration_ms)
      SELECT f.id, f.attempts, ${workerId}, coalesce(f.started_at, (SELECT sk_now())), (SELECT sk_now()), x.outcome::attempt_outcome, x.error, x.duration_ms
      FROM finished f JOIN results x ON x.id = f.id
      WHERE NOT (x.outcome = 'succeeded' AND f.attempts = 1)
      ON CONFLICT (run_id, attempt) DO NOTHING
    )
    SELECT id FROM finished`);

  const applied = new Set(result.rows.map((r) => Number(r.id)));
  return { applied: applied.size, stale: ids.filter((id) => !applied.has(id)) };
}
