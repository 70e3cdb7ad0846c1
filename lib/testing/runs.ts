// Test-only reads of a run as the product shows it: run_status (a running run's live part comes
// from run_queue) and run_attempts (the complete attempt history).
import type pg from "pg";

type Queryable = Pick<pg.Pool, "query">;

/** One run as it stands now, as the tests read it back. */
export type RunRow = {
  id: number;
  state: string;
  attempts: number;
  max_attempts: number;
  run_after: Date;
  lease_owner: string | null;
  lease_expires_at: Date | null;
  started_at: Date | null;
  finished_at: Date | null;
  worker_id: string | null;
  duration_ms: number | null;
  last_error: string | null;
  skip_reason: string | null;
};

/** One run as it stands now (run_status). */
export async function readRun(db: Queryable, id: number): Promise<RunRow> {
  const { rows } = await db.query<RunRow>(`SELECT * FROM run_status WHERE id = $1`, [id]);
  return rows[0];
}

/** Poll a run until `pred` holds (real workers change it), failing with the last row seen. */
export async function waitForRun(db: Queryable, id: number, pred: (r: RunRow) => boolean, timeoutMs = 20_000): Promise<RunRow> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const row = await readRun(db, id);
    if (pred(row)) return row;
    if (Date.now() > until) throw new Error(`run ${id} did not reach the expected state within ${timeoutMs} ms: ${JSON.stringify(row)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A run's attempts, oldest first (run_attempts). */
export async function readAttempts(db: Queryable, runId: number) {
  const { rows } = await db.query(`SELECT * FROM run_attempts WHERE run_id = $1 ORDER BY attempt`, [runId]);
  return rows as { attempt: number; worker_id: string; outcome: string; error: string | null; duration_ms: number | null; started_at: Date; finished_at: Date | null }[];
}
