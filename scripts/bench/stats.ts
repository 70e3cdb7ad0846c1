// Spike numbers, computed in SQL from the rows themselves (started_at / finished_at / due_at).
import type pg from "pg";

export type SpikeStats = {
  runs: number;
  /** Seconds from the due instant until the last run started. */
  lastStartedAfterSeconds: number;
  /** Seconds from the due instant until the last run finished. */
  lastFinishedAfterSeconds: number;
  /** Start lateness (started_at - due_at), seconds. */
  latenessSeconds: { p50: number; p99: number; max: number };
  /** Runs started per second, from the due instant to the last start. */
  claimsPerSecond: number;
  /** Runs finished per second, from the due instant to the last finish. */
  completionsPerSecond: number;
  /** Checkpoints the server began between the phase's start and its end. */
  checkpointsDuring?: number;
  /** WAL the server wrote in the phase, and per run. */
  walMb?: number;
  walBytesPerRun?: number;
};

const r3 = (x: number) => Math.round(x * 1000) / 1000;

/** Stats over `source` (a SELECT yielding started_at, finished_at, due_at), measured from `due`. */
export async function spikeStats(pool: pg.Pool, source: string, due: Date): Promise<SpikeStats> {
  const { rows } = await pool.query<{
    n: number;
    last_start: number;
    last_finish: number;
    p50: number;
    p99: number;
    max: number;
  }>(
    `SELECT count(*)::int AS n,
       extract(epoch FROM max(started_at) - $1::timestamptz)::float8 AS last_start,
       extract(epoch FROM max(finished_at) - $1::timestamptz)::float8 AS last_finish,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM started_at - due_at))::float8 AS p50,
       percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM started_at - due_at))::float8 AS p99,
       max(extract(epoch FROM started_at - due_at))::float8 AS max
     FROM (${source}) s`,
    [due],
  );
  const x = rows[0];
  return {
    runs: x.n,
    lastStartedAfterSeconds: r3(x.last_start),
    lastFinishedAfterSeconds: r3(x.last_finish),
    latenessSeconds: { p50: r3(x.p50), p99: r3(x.p99), max: r3(x.max) },
    claimsPerSecond: Math.round(x.n / Math.max(x.last_start, 0.001)),
    completionsPerSecond: Math.round(x.n / Math.max(x.last_finish, 0.001)),
  };
}

/**
 * Begin a phase the way the top of the hour begins in production: its rows were written long enough
 * ago that a checkpoint has passed since (the tick materialises a slot 15 minutes ahead; the
 * default checkpoint_timeout is 5 minutes), so the first change to each page after the due instant
 * writes a full-page image. Both spikes start from such a checkpoint, taken after their rows are
 * loaded. Without it the two spikes met different servers: the raw one none (its rows written
 * seconds before) and Slotkeeper's one begun by its own materialisation's WAL (max_wal_size), a
 * few seconds before the due instant and writing through the spike, in every run.
 */
export async function checkpointBeforePhase(pool: pg.Pool): Promise<void> {
  await pool.query("CHECKPOINT");
}

/** Where the server's WAL and checkpoint counters stood when a phase began (see `sincePhase`). */
export type PhaseMark = { checkpoints: number; lsn: string };

/**
 * The server's checkpoint count: PostgreSQL 17 moved it from pg_stat_bgwriter to
 * pg_stat_checkpointer (the embedded server is 18, the CI server 15).
 */
async function checkpointCount(pool: pg.Pool): Promise<string> {
  const { rows } = await pool.query<{ v: number }>("SELECT current_setting('server_version_num')::int AS v");
  return rows[0].v >= 170000
    ? "(SELECT (num_timed + num_requested)::int FROM pg_stat_checkpointer)"
    : "(SELECT (checkpoints_timed + checkpoints_req)::int FROM pg_stat_bgwriter)";
}

export async function markPhase(pool: pg.Pool): Promise<PhaseMark> {
  const { rows } = await pool.query<{ n: number; lsn: string }>(`SELECT ${await checkpointCount(pool)} AS n, pg_current_wal_lsn()::text AS lsn`);
  return { checkpoints: rows[0].n, lsn: rows[0].lsn };
}

/**
 * What a phase cost the server beyond its statements: the checkpoints it began (each one costs
 * full-page images on every page touched next) and the WAL it wrote, in MB and in bytes per run.
 */
export async function sincePhase(pool: pg.Pool, mark: PhaseMark, runs: number): Promise<{ checkpointsDuring: number; walMb: number; walBytesPerRun: number }> {
  const { rows } = await pool.query<{ n: number; bytes: string }>(`SELECT ${await checkpointCount(pool)} AS n, pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::bigint::text AS bytes`, [mark.lsn]);
  const bytes = Number(rows[0].bytes);
  return { checkpointsDuring: rows[0].n - mark.checkpoints, walMb: Math.round(bytes / 1048576), walBytesPerRun: Math.round(bytes / Math.max(1, runs)) };
}

/** One statement's share of a phase, from pg_stat_statements. */
export type StatementUse = { query: string; calls: number; rows: number; execMs: number; planMs: number };

/**
 * Where the database's time went in a phase: pg_stat_statements totals for this database, read
 * before and after. Null when the server does not load the extension (it needs
 * shared_preload_libraries; the embedded server does not), so the bench runs the same without it.
 */
export async function statementsSnapshot(pool: pg.Pool): Promise<Map<string, StatementUse> | null> {
  try {
    // The bench's database is a scratch one: the extension's view is created in it.
    await pool.query(`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`);
    const { rows } = await pool.query<{ id: string; query: string; calls: number; rows: number; exec: number; plan: number }>(
      `SELECT queryid::text AS id, query, calls::int, rows::int, total_exec_time AS exec, total_plan_time AS plan
       FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    return new Map(rows.map((r) => [r.id, { query: r.query, calls: r.calls, rows: r.rows, execMs: r.exec, planMs: r.plan }]));
  } catch {
    return null;
  }
}

/** The statements that took the most time between two snapshots, with the text cut to its first 240 characters. */
export function statementsBetween(before: Map<string, StatementUse> | null, after: Map<string, StatementUse> | null, top = 8): StatementUse[] | null {
  if (!before || !after) return null;
  const out: StatementUse[] = [];
  for (const [id, a] of after) {
    const b = before.get(id) ?? { calls: 0, rows: 0, execMs: 0, planMs: 0 };
    if (a.calls === b.calls) continue;
    out.push({
      query: a.query.replace(/\s+/g, " ").slice(0, 240),
      calls: a.calls - b.calls,
      rows: a.rows - b.rows,
      execMs: Math.round(a.execMs - b.execMs),
      planMs: Math.round(a.planMs - b.planMs),
    });
  }
  return out.sort((x, y) => y.execMs + y.planMs - (x.execMs + x.planMs)).slice(0, top);
}

/**
 * Ready a side's tables for its spike, the same way for every side: VACUUM ANALYZE each (the
 * visibility map set, dead rows gone, fresh statistics), so neither meets the other's leftovers.
 */
export async function prepareSpikeTables(pool: pg.Pool, tables: string[]): Promise<void> {
  for (const t of tables) await pool.query(`VACUUM ANALYZE ${t}`);
}

/** What the rows themselves say of a phase: `expected` runs, how many have a start, how many are done. */
export type RunsCheck = { expected: number; started: number; done: number; ok: boolean };

/**
 * The report's oracle: counted over `source` (a SELECT yielding started_at and state), not from any
 * counter the code under test keeps. ok: count(started_at) = expected and every run is done.
 */
export async function checkRuns(pool: pg.Pool, source: string, expected: number, params: unknown[] = []): Promise<RunsCheck> {
  const { rows } = await pool.query<{ n: number; started: number; done: number }>(
    `SELECT count(*)::int AS n, count(started_at)::int AS started, count(*) FILTER (WHERE state::text = 'done')::int AS done FROM (${source}) s`,
    params,
  );
  const x = rows[0];
  return { expected, started: x.started, done: x.done, ok: x.n === expected && x.started === expected && x.done === expected };
}
