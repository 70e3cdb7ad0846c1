import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/client";
import { intArray, prepare, runPrepared, tidArray, type Prepared } from "../db/prepared";
import type { AttemptOutput } from "./output";

/** The lateness of one written attempt, in seconds on the database clock; startSeconds only for a first attempt. */
export type AttemptLateness = { claimSeconds: number; startSeconds: number | null };

/** Longest error text stored on a run or attempt; longer messages are cut with a marker. */
export const MAX_ERROR_LENGTH = 2000;

/** How an attempt ended, as the worker saw it. `aborted` means released on shutdown, not failed. */
export type RunOutcome = "succeeded" | "failed" | "timed_out" | "aborted";

/** One finished attempt to record. */
export type RunResult = {
  id: number;
  /**
   * The run's schedule: how its queue row is found (run_queue_running_idx leads with it). The
   * worker always knows it; without it the runs row is read to find it.
   */
  scheduleId?: number;
  /** Where the queue row was at the claim or the last renewal (ClaimedRun.queueTid): the success path deletes it from there. */
  queueTid?: string;
  /** The fencing token the worker claimed with; the write applies only while it is still current. */
  attempt: number;
  outcome: RunOutcome;
  error?: string | null;
  /** The handler said retrying cannot help (NonRetryableError): dead at once. */
  nonRetryable?: boolean;
  /** Backoff before the next attempt, when the outcome is a failure that may retry. */
  retryDelaySeconds?: number;
  durationMs?: number | null;
  /** What the attempt left (result, log lines, a program's stdout and stderr), bounded and masked; absent when it left nothing. */
  output?: AttemptOutput;
};

/** A result's duration in whole milliseconds, or null when it has none. */
const roundedDuration = (r: RunResult): number | null => (r.durationMs === null || r.durationMs === undefined ? null : Math.round(r.durationMs));

/** Cut an error message to MAX_ERROR_LENGTH characters. */
export function boundError(message: string | null | undefined): string | null {
  if (message === null || message === undefined) return null;
  return message.length <= MAX_ERROR_LENGTH ? message : `${message.slice(0, MAX_ERROR_LENGTH - 15)}… [truncated]`;
}

/**
 * Record a batch of attempt results: done, retry (pending after backoff), dead, or released
 * (shutdown), plus an attempts row for each but a first-attempt success. One statement for the
 * successes and one for the rest, each for the whole batch. Fencing: a run
 * changes only where this worker still holds the same token on its queue row (locked first, so a
 * concurrent rescue either went before, and the token no longer matches, or waits); results whose
 * token is stale change nothing and come back in `stale`.
 *
 * A success deletes the queue row and writes the runs row once, in place: no index of runs names a
 * column it changes, so where the page has room it is a HOT update with no index entry.
 */
export async function finishRuns(db: Db, workerId: string, results: RunResult[], opts: FinishOptions = {}): Promise<{ applied: number; stale: number[] }> {
  if (results.length === 0) return { applied: 0, stale: [] };
  const lateness: AttemptLateness[] = [];
  const outcome = await finishBatch(db, workerId, results, lateness);
  if (lateness.length > 0) opts.onLateness?.(lateness);
  return outcome;
}

/** Options of finishRuns. */
export type FinishOptions = {
  /** Called with the lateness of the attempts the finish applied (the worker's histograms). */
  onLateness?: (lateness: AttemptLateness[]) => void;
};

async function finishBatch(db: Db, workerId: string, results: RunResult[], lateness: AttemptLateness[]): Promise<{ applied: number; stale: number[] }> {
  results = await withSchedule(db, results);
  // Successes, nearly every result at the top of the hour, take a statement that does only what a
  // success needs; the rest (retry, dead, release) the general one.
  const allSucceeded = results.every((r) => r.outcome === "succeeded");
  const succeeded = allSucceeded ? results : results.filter((r) => r.outcome === "succeeded");
  const other = allSucceeded ? [] : results.filter((r) => r.outcome !== "succeeded");
  const applied = new Set<number>();
  const add = (ids: number[]) => {
    for (const id of ids) applied.add(id);
  };
  if (succeeded.length > 0) {
    // Where the queue row was is almost always where it is; the rest go through the index.
    const byTid = succeeded.every((r) => r.queueTid !== undefined) ? succeeded : succeeded.filter((r) => r.queueTid !== undefined);
    const done = byTid.length > 0 ? await finishSucceeded(db, workerId, byTid, "tid") : { ids: [], lateness: [] };
    lateness.push(...done.lateness);
    // The common case: every success applied where it was. Nothing to look up one by one.
    if (done.ids === "all" && byTid.length === results.length) return { applied: results.length, stale: [] };
    add(done.ids === "all" ? byTid.map((r) => r.id) : done.ids);
    const rest = succeeded.filter((r) => !applied.has(r.id));
    if (rest.length > 0) {
      const more = await finishSucceeded(db, workerId, rest, "index");
      lateness.push(...more.lateness);
      add(more.ids === "all" ? rest.map((r) => r.id) : more.ids);
    }
  }
  if (other.length > 0) {
    const written = await finishOther(db, workerId, other);
    lateness.push(...written.lateness);
    add(written.ids);
  }
  return { applied: applied.size, stale: results.map((r) => r.id).filter((id) => !applied.has(id)) };
}


/**
 * The output of the results that have some, for the attempts this statement applies (`held`: the
 * fence passed), in the same statement as their outcome. Only results with output are in the arrays.
 */
const OUTPUT_INSERT = sql`
      INSERT INTO attempt_output (run_id, attempt, result, log, stdout, stderr)
      SELECT h.id, h.attempt, o.result::jsonb, o.log::jsonb, o.stdout, o.stderr
      FROM unnest(${sql.placeholder("outIds")}::bigint[], ${sql.placeholder("outResults")}::text[], ${sql.placeholder("outLogs")}::text[],
          ${sql.placeholder("outStdout")}::text[], ${sql.placeholder("outStderr")}::text[]) AS o(id, result, log, stdout, stderr)
        JOIN held h ON h.id = o.id
      ON CONFLICT (run_id, attempt) DO NOTHING`;

/** The output arrays of OUTPUT_INSERT: one entry per result that has output. */
function outputValues(results: RunResult[]): Record<string, unknown> {
  const withOutput = results.filter((r) => r.output !== undefined);
  return {
    outIds: intArray(withOutput.map((r) => r.id)),
    outResults: withOutput.map((r) => r.output!.result),
    outLogs: withOutput.map((r) => r.output!.log),
    outStdout: withOutput.map((r) => r.output!.stdout),
    outStderr: withOutput.map((r) => r.output!.stderr),
  };
}

/**
 * What a finish returns per applied attempt, over its runs row r (as the claim saw it), the
 * attempt's start as claimed and its token: claim lateness (started_at − run_after) and start
 * lateness (started_at − due_at, first attempts only) in whole milliseconds. date_part is float8
 * arithmetic, cheaper per run than extract's numeric.
 */
const latenessColumns = (startedAt: SQL, attempt: SQL) => sql`round(date_part('epoch', ${startedAt} - r.run_after) * 1000)::bigint AS claim_ms,
      CASE WHEN ${attempt} = 1 THEN round(date_part('epoch', ${startedAt} - r.due_at) * 1000)::bigint END AS start_ms`;
/** The lateness of a finish's applied attempts as one string: `claim[:start]` per attempt, comma-separated. */
const LATENESS_AGGREGATE = sql`string_agg(concat_ws(':', claim_ms, start_ms), ',')`;

/** Parse LATENESS_AGGREGATE's string into seconds. */
function parseLateness(text: string | null): AttemptLateness[] {
  if (!text) return [];
  return text.split(",").map((entry) => {
    const [claim, start] = entry.split(":");
    return { claimSeconds: Number(claim) / 1000, startSeconds: start === undefined ? null : Number(start) / 1000 };
  });
}

/**
 * The queue rows `held` locked, deleted by key, never by the ctid the lock returned: when a
 * renewal committed after this statement began, the lock waited for it and returned the renewal's
 * new version, which the statement's snapshot cannot see, so a delete by that ctid found nothing
 * and the record went on without its queue row. By key the delete finds the version its snapshot
 * sees and follows it to the newest one, which `held` has locked since.
 */
const DELETE_HELD = sql`DELETE FROM run_queue q USING held h
      WHERE q.state = 'running' AND q.schedule_id = h.schedule_id AND q.run_id = h.id AND q.attempts = h.attempt AND q.lease_owner = ${sql.placeholder("workerId")}`;

/**
 * Successes: delete each queue row (fenced) and write the record once, in place. The first attempt
 * that succeeded stays on the run row (worker_id, started_at, finished_at, duration_ms; run_attempts
 * reads it from there): no attempts row and no foreign-key check for the common case.
 */
const finishSucceededBy = (find: "tid" | "index", withOutput: boolean) => {
  // Fencing: only the holder of the current token may finish the run; the delete checks it on the
  // row it removes (after waiting out a concurrent rescue, on that rescue's version).
  const held =
    find === "tid"
      ? sql`
      -- Straight to where the row was: a TID look-up per run, no index descent and no separate lock
      -- (the delete locks). A row that moved since (rescued, say) is not found here. Only a running
      -- row has a lease owner, so the owner check is the state check too; written without
      -- state = 'running' so that the planner, which rarely has statistics for running rows, cannot
      -- prefer a walk of run_queue_running_idx with a 500-element filter per row.
      DELETE FROM run_queue q
      USING unnest(${sql.placeholder("ids")}::bigint[], ${sql.placeholder("tokens")}::int[], ${sql.placeholder("tids")}::tid[], ${sql.placeholder("durations")}::int[])
        AS x(id, attempt, tid, duration_ms)
      WHERE q.ctid = x.tid AND q.run_id = x.id AND q.attempts = x.attempt AND q.lease_owner = ${sql.placeholder("workerId")}
      RETURNING x.id, x.attempt, x.duration_ms, q.started_at`
      : sql`
      -- Each queue row among its schedule's running runs (run_queue_running_idx, usually one; the
      -- lateral keeps it a probe per run), locked, then deleted by key (DELETE_HELD).
      SELECT f.started_at, x.* FROM unnest(${sql.placeholder("ids")}::bigint[], ${sql.placeholder("tokens")}::int[], ${sql.placeholder("scheduleIds")}::bigint[],
          ${sql.placeholder("durations")}::int[]) AS x(id, attempt, schedule_id, duration_ms)
        CROSS JOIN LATERAL (
          SELECT q.started_at FROM run_queue q
          WHERE q.state = 'running' AND q.schedule_id = x.schedule_id AND q.run_id = x.id AND q.attempts = x.attempt AND q.lease_owner = ${sql.placeholder("workerId")}
          FOR UPDATE
        ) f`;
  return prepare(`${find === "tid" ? "sk_finish_tid" : "sk_finish_done"}${withOutput ? "_out" : ""}`, sql`
    WITH clock AS (SELECT sk_now() AS now),
    held AS (${held}),
    ${find === "index" ? sql`gone AS (${DELETE_HELD}),` : sql``}${withOutput ? sql`
    output AS (${OUTPUT_INSERT}),` : sql``}
    recorded AS (
      -- A success after retries: its attempt gets a row like the ones before it.
      INSERT INTO attempts (run_id, attempt, worker_id, started_at, finished_at, outcome, duration_ms)
      SELECT h.id, h.attempt, ${sql.placeholder("workerId")}, coalesce(h.started_at, (SELECT now FROM clock)), (SELECT now FROM clock), 'succeeded', h.duration_ms
      FROM held h WHERE h.attempt > 1
      ON CONFLICT (run_id, attempt) DO NOTHING
    ),
    done AS (
      -- No index of runs names a column this changes: where the page has room, a HOT update.
      UPDATE runs r SET state = 'done', attempts = h.attempt, worker_id = ${sql.placeholder("workerId")}, started_at = h.started_at,
        finished_at = (SELECT now FROM clock), last_error = NULL, duration_ms = h.duration_ms
      -- The clock as an InitPlan, not joined: a join would carry its whole row along with each run.
      FROM held h
      -- A primary-key probe per run. Not id = ANY(ARRAY(…)) as well: the planner expects one row from
      -- a DELETE … RETURNING, puts that scan inside a nested loop, and reads the whole array again
      -- for every run (docs/benchmarks.md, "Measurements behind the hot path").
      WHERE r.id = h.id
      -- The attempt's lateness on the database clock (a success changes neither run_after nor
      -- due_at, so these are the values the claim saw): claim lateness, and start lateness of a first attempt.
      RETURNING r.id, ${latenessColumns(sql`h.started_at`, sql`h.attempt`)}
    )
    -- One row, not one per run (the driver's cost is per row and per column): how many were
    -- applied and, only when some were not, which; the lateness of every applied one in one string.
    SELECT count(*)::int AS applied, CASE WHEN count(*) < ${sql.placeholder("sent")}::int THEN string_agg(id::text, ',') END AS ids,
      ${LATENESS_AGGREGATE} AS lateness FROM done`);
};
// Each statement in two forms: without output, what nearly every success is (a no-op at the top of
// the hour: its finish is the one bulk UPDATE of runs it always was), and with the insert of the
// output of the results in the batch that have some.
const FINISH_BY_TID = finishSucceededBy("tid", false);
const FINISH_BY_INDEX = finishSucceededBy("index", false);
const FINISH_BY_TID_OUT = finishSucceededBy("tid", true);
const FINISH_BY_INDEX_OUT = finishSucceededBy("index", true);

/** The ids a finish applied, or "all" when it applied every one it was given, and their lateness. */
async function finishSucceeded(db: Db, workerId: string, results: RunResult[], find: "tid" | "index"): Promise<{ ids: number[] | "all"; lateness: AttemptLateness[] }> {
  const values: Record<string, unknown> = { workerId, sent: results.length, ids: intArray(results.map((r) => r.id)), tokens: intArray(results.map((r) => r.attempt)), durations: intArray(results.map(roundedDuration)) };
  if (find === "tid") values.tids = tidArray(results.map((r) => r.queueTid!));
  else values.scheduleIds = intArray(results.map((r) => r.scheduleId!));
  const withOutput = results.some((r) => r.output !== undefined);
  if (withOutput) Object.assign(values, outputValues(results));
  const statement: Prepared = find === "tid" ? (withOutput ? FINISH_BY_TID_OUT : FINISH_BY_TID) : withOutput ? FINISH_BY_INDEX_OUT : FINISH_BY_INDEX;
  const { rows } = await runPrepared<{ applied: number; ids: string | null; lateness: string | null }>(db, statement, values);
  const lateness = parseLateness(rows[0].lateness);
  if (rows[0].applied === results.length) return { ids: "all", lateness };
  return { ids: rows[0].ids ? rows[0].ids.split(",").map(Number) : [], lateness };
}

/** Failures, timeouts and releases (never a success: finishSucceeded): retry after backoff, dead, or back to pending at once; each with its attempts row. */
const FINISH_OTHER = prepare("sk_finish_other", sql`
    WITH results AS (
      SELECT * FROM unnest(${sql.placeholder("ids")}::bigint[], ${sql.placeholder("tokens")}::int[], ${sql.placeholder("scheduleIds")}::bigint[],
        ${sql.placeholder("outcomes")}::text[], ${sql.placeholder("errors")}::text[],
        ${sql.placeholder("nonRetryable")}::bool[], ${sql.placeholder("delays")}::float8[], ${sql.placeholder("durations")}::int[])
        AS x(id, attempt, schedule_id, outcome, error, non_retryable, delay_seconds, duration_ms)
    ),
    held AS (
      -- Fencing: only the holder of the current token may finish the run. Each queue row is found
      -- among its schedule's running runs (run_queue_running_idx) and locked, so the checks hold until commit.
      SELECT h.max_attempts, h.started_at, x.*, ${latenessColumns(sql`h.started_at`, sql`x.attempt`)},
        CASE
          WHEN x.outcome = 'aborted' THEN 'pending'
          WHEN x.non_retryable OR x.attempt >= h.max_attempts THEN 'dead'
          ELSE 'pending'
        END::run_state AS next_state
      FROM results x
      CROSS JOIN LATERAL (
        SELECT q.max_attempts, q.started_at FROM run_queue q
        WHERE q.state = 'running' AND q.schedule_id = x.schedule_id
          AND q.run_id = x.id AND q.attempts = x.attempt AND q.lease_owner = ${sql.placeholder("workerId")}
        FOR UPDATE
      ) h
      -- The record before this statement changes it: run_after and due_at as the claim saw them (lateness).
      CROSS JOIN LATERAL (SELECT r.run_after, r.due_at FROM runs r WHERE r.id = x.id) r
    ),
    decided AS (
      SELECT held.*,
        -- One clock: the retry becomes claimable at sk_now() + backoff (the delay is a duration).
        -- (SELECT sk_now()) is read once per statement, not once per row (it is not inlinable).
        CASE
          WHEN outcome = 'aborted' THEN (SELECT sk_now())
          WHEN next_state = 'pending' THEN (SELECT sk_now()) + make_interval(secs => delay_seconds)
        END AS retry_at,
        -- A shutdown release is not the handler's fault: it does not use up the allowance.
        CASE WHEN outcome = 'aborted' THEN greatest(max_attempts, attempt + 1) ELSE max_attempts END AS allowed
      FROM held
    ),
    waiting AS (
      -- Retry, release or dead: the run stays in the queue, waiting (or dead until re-queued). By
      -- key, not by the ctid held's lock returned: that is a renewal's new version when one
      -- committed after this statement began, which this statement's snapshot cannot see (as DELETE_HELD).
      UPDATE run_queue q SET state = d.next_state, run_after = coalesce(d.retry_at, q.run_after), max_attempts = d.allowed,
        lease_owner = NULL, lease_expires_at = NULL, started_at = NULL
      FROM decided d
      WHERE q.state = 'running' AND q.schedule_id = d.schedule_id AND q.run_id = d.id AND q.attempts = d.attempt AND q.lease_owner = ${sql.placeholder("workerId")}
    ),
    finished AS (
      UPDATE runs r SET
        state = d.next_state,
        attempts = d.attempt,
        max_attempts = d.allowed,
        run_after = coalesce(d.retry_at, r.run_after),
        worker_id = ${sql.placeholder("workerId")},
        started_at = d.started_at,
        finished_at = CASE WHEN d.next_state = 'dead' THEN (SELECT sk_now()) END,
        last_error = coalesce(d.error, r.last_error),
        duration_ms = d.duration_ms
      FROM decided d
      WHERE r.id = d.id
      RETURNING r.id, d.claim_ms, d.start_ms
    ),
    output AS (${OUTPUT_INSERT}),
    recorded AS (
      -- Every attempt that did not succeed gets its row.
      INSERT INTO attempts (run_id, attempt, worker_id, started_at, finished_at, outcome, error, duration_ms)
      SELECT d.id, d.attempt, ${sql.placeholder("workerId")}, coalesce(d.started_at, (SELECT sk_now())), (SELECT sk_now()), d.outcome::attempt_outcome, d.error, d.duration_ms
      FROM decided d
      ON CONFLICT (run_id, attempt) DO NOTHING
    )
    SELECT string_agg(id::text, ',') AS ids, ${LATENESS_AGGREGATE} AS lateness FROM finished`);

async function finishOther(db: Db, workerId: string, results: RunResult[]): Promise<{ ids: number[]; lateness: AttemptLateness[] }> {
  const result = await runPrepared<{ ids: string | null; lateness: string | null }>(db, FINISH_OTHER, {
    workerId,
    ids: intArray(results.map((r) => r.id)),
    tokens: intArray(results.map((r) => r.attempt)),
    scheduleIds: intArray(results.map((r) => r.scheduleId!)),
    outcomes: results.map((r) => r.outcome),
    errors: results.map((r) => boundError(r.error)),
    nonRetryable: results.map((r) => r.nonRetryable === true),
    delays: results.map((r) => Math.max(0, r.retryDelaySeconds ?? 0)),
    durations: intArray(results.map(roundedDuration)),
    ...outputValues(results),
  });
  const row = result.rows[0];
  return { ids: row?.ids ? row.ids.split(",").map(Number) : [], lateness: parseLateness(row?.lateness ?? null) };
}

/**
 * Fill in the schedule of runs given by id alone, from their runs rows. The worker always passes
 * it; this keeps the hot-path statements free of a fallback they never take.
 */
export async function withSchedule<T extends { id: number; scheduleId?: number }>(db: Db, runs: T[]): Promise<T[]> {
  if (runs.every((r) => r.scheduleId !== undefined)) return runs;
  const missing = runs.filter((r) => r.scheduleId === undefined).map((r) => r.id);
  const found = await db.execute<{ id: number; schedule_id: number }>(sql`SELECT id, schedule_id FROM runs WHERE id = ANY(${sql.param(missing)}::bigint[])`);
  const byId = new Map(found.rows.map((r) => [Number(r.id), Number(r.schedule_id)]));
  return runs.map((r) => (r.scheduleId === undefined && byId.has(r.id) ? { ...r, scheduleId: byId.get(r.id) } : r));
}
