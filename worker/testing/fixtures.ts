// Test-only helpers for the run tests: a schedule and its runs, inserted with plain SQL. They take
// only what a test cares about; everything else gets a harmless default.
import type pg from "pg";

type Queryable = Pick<pg.Pool, "query">;

export type ScheduleSpec = {
  name?: string;
  handler?: string;
  payload?: unknown;
  overlap?: "allow" | "forbid" | "skip";
  leaseSeconds?: number;
  retryMaxAttempts?: number;
  retryBaseSeconds?: number;
  retryCapSeconds?: number;
  partition?: number;
};

let counter = 0;

/**
 * Insert a schedule (every hour, disabled so no tick materialises anything, catch-up `all` so the
 * tick's lateness pass leaves old test runs alone) and return its id.
 */
export async function insertSchedule(db: Queryable, s: ScheduleSpec = {}): Promise<number> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO schedules (name, handler, payload, every_seconds, overlap, lease_seconds, retry_max_attempts,
       retry_base_seconds, retry_cap_seconds, enabled, next_slot_at, partition, catch_up)
     VALUES ($1, $2, $3::jsonb, 3600, $4, $5, $6, $7, $8, false, '2100-01-01', $9, 'all') RETURNING id`,
    [
      s.name ?? `test-${process.pid}-${++counter}`,
      s.handler ?? "noop",
      JSON.stringify(s.payload ?? {}),
      s.overlap ?? "allow",
      s.leaseSeconds ?? 60,
      s.retryMaxAttempts ?? 6,
      s.retryBaseSeconds ?? 30,
      s.retryCapSeconds ?? 900,
      s.partition ?? 0,
    ],
  );
  return Number(rows[0].id);
}

export type RunSpec = { scheduledFor: Date; runAfter?: Date; state?: string; attempts?: number; maxAttempts?: number; partition?: number };

/** Insert runs of one schedule (pending and due at their slot unless told otherwise); returns their ids in order. */
export async function insertRuns(db: Queryable, scheduleId: number, runs: RunSpec[], defaults: { maxAttempts?: number } = {}): Promise<number[]> {
  if (runs.length === 0) return [];
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, attempts, max_attempts)
     SELECT $1, coalesce(x.partition, s.partition), x.slot, x.slot, coalesce(x.run_after, x.slot), coalesce(x.state, 'pending')::run_state,
       coalesce(x.attempts, 0), coalesce(x.max_attempts, s.retry_max_attempts)
     FROM unnest($2::timestamptz[], $3::timestamptz[], $4::text[], $5::int[], $6::int[], $7::int[])
       WITH ORDINALITY AS x(slot, run_after, state, attempts, max_attempts, partition, n)
     JOIN schedules s ON s.id = $1
     ORDER BY x.n
     RETURNING id`,
    [
      scheduleId,
      runs.map((r) => r.scheduledFor),
      runs.map((r) => r.runAfter ?? null),
      runs.map((r) => r.state ?? null),
      runs.map((r) => r.attempts ?? null),
      runs.map((r) => r.maxAttempts ?? defaults.maxAttempts ?? null),
      runs.map((r) => r.partition ?? null),
    ],
  );
  return rows.map((r) => Number(r.id));
}

/** `count` slots a minute apart, starting at `from`. */
export function slots(from: Date | string | number, count: number, stepMs = 60_000): Date[] {
  const t0 = new Date(from).getTime();
  return Array.from({ length: count }, (_, i) => new Date(t0 + i * stepMs));
}

/** One run as it stands now (run_status: a running run's live part comes from run_queue), as the tests read it back. */
export async function readRun(db: Queryable, id: number) {
  const { rows } = await db.query(`SELECT * FROM run_status WHERE id = $1`, [id]);
  return rows[0] as {
    id: string; state: string; attempts: number; max_attempts: number; run_after: Date; lease_owner: string | null;
    lease_expires_at: Date | null; last_error: string | null; skip_reason: string | null; finished_at: Date | null;
  };
}

/** Poll `check` until it holds (another process or loop changes the database), or fail naming `what`. */
export async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, what: string, everyMs = 100): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Poll a run's row until `pred` holds (real workers change it), failing with the last row seen. */
export async function waitForRun(db: Queryable, id: number, pred: (r: Awaited<ReturnType<typeof readRun>>) => boolean, timeoutMs = 20_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const row = await readRun(db, id);
    if (pred(row)) return row;
    if (Date.now() > until) throw new Error(`run ${id} did not reach the expected state: ${JSON.stringify(row)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A run's attempts rows, oldest first. */
export async function readAttempts(db: Queryable, runId: number) {
  const { rows } = await db.query(`SELECT * FROM run_attempts WHERE run_id = $1 ORDER BY attempt`, [runId]);
  return rows as { attempt: number; worker_id: string; outcome: string; error: string | null; duration_ms: number | null; finished_at: Date | null }[];
}
