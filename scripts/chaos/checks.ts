// Reads the database after the drain and turns it into the report's figures. Each query names
// the promise it checks. Times come back as epoch milliseconds.
import pg from "pg";

/** Run one query and return its rows. */
async function rows<T>(pool: pg.Pool, text: string, values: unknown[] = []): Promise<T[]> {
  return (await pool.query(text, values)).rows as T[];
}

/**
 * Runs of the given schedules, for the oracle; `firstStartedAt` is the lowest attempt's start on
 * the database clock, which decides max lateness (the earliest stored time is not always the
 * first: a clock step back makes later starts read earlier).
 */
export async function readRuns(pool: pg.Pool, scheduleIds: number[]) {
  return rows<{ id: number; scheduleId: number; scheduledFor: number; state: string; origin: string; skipReason: string | null; lastError: string | null; skippedUntil: number | null; firstStartedAt: number | null }>(
    pool,
    `SELECT id::int, schedule_id::int AS "scheduleId", (extract(epoch FROM scheduled_for) * 1000)::float8 AS "scheduledFor",
       state::text, origin::text, skip_reason::text AS "skipReason", last_error AS "lastError",
       (extract(epoch FROM skipped_until) * 1000)::float8 AS "skippedUntil",
       (SELECT extract(epoch FROM a.started_at) * 1000 FROM run_attempts a WHERE a.run_id = run_status.id ORDER BY a.attempt LIMIT 1)::float8 AS "firstStartedAt"
     FROM run_status WHERE schedule_id = ANY($1::bigint[])`,
    [scheduleIds],
  );
}

/** At-least-once: runs up to the cut still unfinished, runs running past lease + poll, terminal runs without a reason. */
export async function readRunHealth(pool: pg.Pool, cutAt: number, pollMs: number) {
  const [r] = await rows<{ lost: number; stuck: number; no_reason: number; by_state: Record<string, number> }>(
    pool,
    `SELECT
       count(*) FILTER (WHERE state IN ('pending', 'running') AND scheduled_for <= to_timestamp($1 / 1000.0))::int AS lost,
       count(*) FILTER (WHERE state = 'running' AND lease_expires_at < sk_now() - make_interval(secs => $2 / 1000.0))::int AS stuck,
       count(*) FILTER (WHERE (state = 'dead' AND last_error IS NULL) OR (state = 'skipped' AND skip_reason IS NULL))::int AS no_reason,
       (SELECT coalesce(jsonb_object_agg(state, n), '{}') FROM (SELECT state::text, count(*)::int AS n FROM run_status GROUP BY state) s) AS by_state
     FROM run_status`,
    [cutAt, pollMs],
  );
  return r;
}

/**
 * Idempotency and fencing, from the ledger and the attempts history:
 * - duplicate_effects: ledger rows beyond one per slot (schedule, slot time);
 * - missing_effects: done sql-ledger runs with no ledger row;
 * - stale_writes_accepted: done runs whose ledger row carries another token than the attempt that
 *   succeeded (a superseded attempt's write landed last), ledger tokens above the run's counter,
 *   and done runs whose succeeding attempt is not the run's current token (a stale finish);
 * - attempt_violations: attempt numbers outside 1..attempts, gaps in a finished run's attempts,
 *   or more than one succeeded attempt per run.
 */
export async function readFencing(pool: pg.Pool) {
  const [r] = await rows<Record<string, number>>(
    pool,
    `WITH per_slot AS (SELECT schedule_id, scheduled_for, count(*) AS n FROM ledger GROUP BY 1, 2),
     succ AS (
       SELECT a.run_id, max(a.attempt) AS attempt, count(*) AS n, (array_agg(a.worker_id ORDER BY a.attempt DESC))[1] AS worker_id
       FROM run_attempts a WHERE a.outcome = 'succeeded' GROUP BY a.run_id),
     done AS (
       SELECT r.id, r.attempts, r.schedule_id, r.scheduled_for, s.handler FROM run_status r JOIN schedules s ON s.id = r.schedule_id
       WHERE r.state = 'done' AND r.origin <> 'manual'),
     att AS (
       SELECT r.id, r.state, r.attempts, count(a.attempt) AS n, min(a.attempt) AS lo, max(a.attempt) AS hi
       FROM run_status r LEFT JOIN run_attempts a ON a.run_id = r.id GROUP BY r.id, r.state, r.attempts)
     SELECT
       (SELECT coalesce(sum(n - 1), 0) FROM per_slot WHERE n > 1)::int AS duplicate_effects,
       (SELECT coalesce(sum(writes - 1), 0) FROM ledger)::int AS repeated_ledger_writes,
       (SELECT count(*) FROM done d WHERE d.handler = 'sql-ledger'
          AND NOT EXISTS (SELECT 1 FROM ledger l WHERE l.schedule_id = d.schedule_id AND l.scheduled_for = d.scheduled_for))::int AS missing_effects,
       (SELECT count(*) FROM done d JOIN succ ON succ.run_id = d.id
          JOIN ledger l ON l.schedule_id = d.schedule_id AND l.scheduled_for = d.scheduled_for
          WHERE l.fencing_token <> succ.attempt OR l.worker_id <> succ.worker_id)::int AS stale_ledger_writes,
       (SELECT count(*) FROM ledger l JOIN run_status r ON r.schedule_id = l.schedule_id AND r.scheduled_for = l.scheduled_for AND r.origin <> 'manual'
          WHERE l.fencing_token > r.attempts)::int AS ledger_token_above_run,
       (SELECT count(*) FROM done d LEFT JOIN succ ON succ.run_id = d.id WHERE succ.attempt IS DISTINCT FROM d.attempts)::int AS stale_finishes,
       (SELECT count(*) FROM att WHERE att.hi > att.attempts OR att.lo < 1)::int AS attempts_out_of_range,
       (SELECT count(*) FROM att WHERE att.state IN ('done', 'dead') AND att.n <> att.attempts)::int AS attempt_gaps,
       (SELECT count(*) FROM succ WHERE n > 1)::int AS double_success`,
  );
  return r;
}

/**
 * Duplicate starts: attempts beyond the first. Each must be explained by what ended the attempt
 * before it: a lease expiry (the worker died or stalled), a failure that retried, or a release on
 * shutdown. An earlier attempt that succeeded, or left no row, explains nothing.
 */
export async function readDuplicateStarts(pool: pg.Pool) {
  const list = await rows<{ outcome: string | null; n: number }>(
    pool,
    `SELECT prev.outcome::text AS outcome, count(*)::int AS n
     FROM run_attempts a LEFT JOIN run_attempts prev ON prev.run_id = a.run_id AND prev.attempt = a.attempt - 1
     WHERE a.attempt > 1 GROUP BY 1
     UNION ALL
     SELECT 'current_attempt_running', count(*)::int FROM run_status r
     WHERE r.state = 'running' AND r.attempts > 1 AND NOT EXISTS (SELECT 1 FROM run_attempts p WHERE p.run_id = r.id AND p.attempt = r.attempts - 1)`,
  );
  const byPrevious: Record<string, number> = {};
  for (const r of list) if (r.n > 0) byPrevious[r.outcome ?? "no_row"] = r.n;
  const total = Object.values(byPrevious).reduce((a, b) => a + b, 0);
  const unexplained = (byPrevious.succeeded ?? 0) + (byPrevious.no_row ?? 0) + (byPrevious.current_attempt_running ?? 0);
  return { total, byPrevious, explainedByLeaseExpiry: byPrevious.lease_expired ?? 0, unexplained };
}

/**
 * When the attempt after `attempt` of each run started (ms, the server's real clock), for recovery
 * times, and, when the attempt lost its lease, when that lease ran out (the database clock).
 */
export async function readTakeovers(pool: pg.Pool, held: { runId: number; attempt: number }[]) {
  if (held.length === 0) return new Map<string, { takeoverAt: number | null; finishedBy: string | null; leaseExpiredAt: number | null }>();
  const r = await rows<{ run_id: number; attempt: number; takeover_at: number | null; own_outcome: string | null; lease_expired_at: number | null }>(
    pool,
    `SELECT h.run_id::int, h.attempt::int,
       chaos_claim_ms(h.run_id, h.attempt + 1) AS takeover_at,
       a.outcome::text AS own_outcome,
       CASE WHEN a.outcome = 'lease_expired' THEN (extract(epoch FROM a.finished_at) * 1000)::float8 END AS lease_expired_at
     FROM unnest($1::bigint[], $2::int[]) AS h(run_id, attempt)
     LEFT JOIN run_attempts a ON a.run_id = h.run_id AND a.attempt = h.attempt`,
    [held.map((h) => h.runId), held.map((h) => h.attempt)],
  );
  return new Map(r.map((x) => [`${x.run_id}:${x.attempt}`, { takeoverAt: x.takeover_at, finishedBy: x.own_outcome, leaseExpiredAt: x.lease_expired_at }]));
}

/**
 * When each scheduled run first started: its lowest attempt's claim on the server's real clock
 * (chaos_claims; see scripts/chaos/database.ts), and when it was due (on the database clock). The
 * lowest attempt, not the earliest time: an attempt started while a forward clock step lasted
 * stores a time up to a step ahead of one started after the step back.
 */
export async function readFirstStarts(pool: pg.Pool): Promise<{ runId: number; schedule: string; dueAt: number; startedAt: number }[]> {
  return rows<{ runId: number; schedule: string; dueAt: number; startedAt: number }>(
    pool,
    `SELECT r.id::int AS "runId", s.name AS schedule, (extract(epoch FROM r.due_at) * 1000)::float8 AS "dueAt",
       chaos_claim_ms(r.id, (SELECT min(c.attempt) FROM chaos_claims c WHERE c.run_id = r.id)) AS "startedAt"
     FROM runs r JOIN schedules s ON s.id = r.schedule_id
     WHERE r.origin <> 'manual' AND EXISTS (SELECT 1 FROM chaos_claims c WHERE c.run_id = r.id)`,
  );
}

/** Final schedule state for the lost-acks check. */
export async function readSchedules(pool: pg.Pool) {
  return rows<{ id: number; name: string; description: string; enabled: boolean; deleted: boolean }>(
    pool,
    `SELECT id::int, name, description, enabled, deleted_at IS NOT NULL AS deleted FROM schedules`,
  );
}

/** Runs named by requeue calls: their counters now. */
export async function readRunCounters(pool: pg.Pool, ids: number[]) {
  const r = await rows<{ id: number; state: string; attempts: number; max_attempts: number }>(
    pool,
    `SELECT id::int, state::text, attempts, max_attempts FROM run_status WHERE id = ANY($1::bigint[])`,
    [ids],
  );
  return new Map(r.map((x) => [x.id, x]));
}

/** Every attempt of the given schedules' scheduled runs (ms; starts on the server's real clock), with the outcome of the one before it. */
export async function readAttemptHistory(pool: pg.Pool, scheduleIds: number[]) {
  return rows<{ runId: number; scheduleId: number; scheduledFor: number; attempt: number; workerId: string; startedAt: number; finishedAt: number | null; outcome: string; previousOutcome: string | null }>(
    pool,
    `SELECT r.id::int AS "runId", r.schedule_id::int AS "scheduleId", (extract(epoch FROM r.scheduled_for) * 1000)::float8 AS "scheduledFor",
       a.attempt, a.worker_id AS "workerId", coalesce(chaos_claim_ms(a.run_id, a.attempt), (extract(epoch FROM a.started_at) * 1000)::float8) AS "startedAt",
       (extract(epoch FROM a.finished_at) * 1000)::float8 AS "finishedAt", a.outcome::text AS outcome,
       (SELECT p.outcome::text FROM run_attempts p WHERE p.run_id = r.id AND p.attempt = a.attempt - 1) AS "previousOutcome"
     FROM runs r JOIN run_attempts a ON a.run_id = r.id
     WHERE r.schedule_id = ANY($1::bigint[]) AND r.origin <> 'manual'`,
    [scheduleIds],
  );
}

/** Attempts that lost their lease (outcome lease_expired), on any schedule (ms: the start on the server's real clock, the expiry on the database's). */
export async function readLeaseLosses(pool: pg.Pool) {
  return rows<{ runId: number; attempt: number; workerId: string; startedAt: number; finishedAt: number | null }>(
    pool,
    `SELECT a.run_id::int AS "runId", a.attempt, a.worker_id AS "workerId", coalesce(chaos_claim_ms(a.run_id, a.attempt), (extract(epoch FROM a.started_at) * 1000)::float8) AS "startedAt",
       (extract(epoch FROM a.finished_at) * 1000)::float8 AS "finishedAt"
     FROM attempts a WHERE a.outcome = 'lease_expired'`,
  );
}

/** Every ledger write the database accepted, as the harness's trigger recorded it (ms, server clock), with the lease on the slot's run as it landed. */
export async function readLedgerWrites(pool: pg.Pool) {
  return rows<{ key: string; token: number; workerId: string; at: number; holder: string | null; holderToken: number | null; leaseLive: boolean | null }>(
    pool,
    `SELECT idempotency_key AS key, fencing_token AS token, worker_id AS "workerId", (extract(epoch FROM at) * 1000)::float8 AS at,
       holder, holder_token AS "holderToken", lease_live AS "leaseLive" FROM chaos_ledger_writes`,
  );
}

/** Heartbeat-schedule runs that finished done, and how long their successful attempt ran (ms). */
export async function readLongRuns(pool: pg.Pool, scheduleIds: number[]) {
  const [r] = await rows<{ done: number; longest_ms: number | null }>(
    pool,
    `SELECT count(*)::int AS done, max(r.duration_ms)::float8 AS longest_ms FROM runs r
     WHERE r.schedule_id = ANY($1::bigint[]) AND r.state = 'done' AND r.origin <> 'manual'`,
    [scheduleIds],
  );
  return r;
}
