// The raw ceiling's table and statements (scripts/bench/raw.ts makes the table, raw-worker.ts runs
// the statements): bare SQL, no Slotkeeper code, so the ceiling measures what PostgreSQL can do with
// the claim's shape. scripts/bench/raw-statements.test.ts holds the finish to its plan.

/** `partitioned`: the ceiling, shaped like a Slotkeeper worker; `plain`: the plain `FOR UPDATE SKIP LOCKED` claim. */
export type RawMode = "partitioned" | "plain";

/**
 * The settings of the connections the ceiling finishes on: those `createPool` (lib/db/client.ts)
 * gives every Slotkeeper pool, generic plans and no JIT (see RAW_FINISH). Its claims keep the
 * server's defaults: their custom plans walk the claimable index with the batch's LIMIT known.
 */
export const RAW_FINISH_SESSION_OPTIONS = "-c plan_cache_mode=force_generic_plan -c jit=off";

/** `raw_runs`, and the index each mode's claim walks in order (Slotkeeper's is (partition, run_after)). */
export function rawTableDdl(mode: RawMode): string[] {
  return [
    `DROP TABLE IF EXISTS raw_runs`,
    `CREATE TABLE raw_runs (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      job_id int NOT NULL,
      partition int NOT NULL,
      due_at timestamptz NOT NULL,
      state text NOT NULL DEFAULT 'pending',
      lease_owner text,
      lease_expires_at timestamptz,
      fencing_token int NOT NULL DEFAULT 0,
      started_at timestamptz,
      finished_at timestamptz)`,
    mode === "plain"
      ? `CREATE INDEX raw_runs_claimable_idx ON raw_runs (due_at) WHERE state = 'pending'`
      : `CREATE INDEX raw_runs_claimable_idx ON raw_runs (partition, due_at) WHERE state = 'pending'`,
  ];
}

/**
 * The ceiling's runs ($1 of them, due at $2, spread over $3 partitions by job id): what both the
 * spike (raw.ts) and the statement cost (db-cost.ts) drain.
 */
export const RAW_INSERT = `INSERT INTO raw_runs (job_id, partition, due_at) SELECT g, mod(g, $3), $2 FROM generate_series(1, $1::int) g`;

/** The claim's text, in every partition or in the one named by $3. */
const rawClaimText = (inPartition: boolean) => `WITH claimable AS (
    SELECT id FROM raw_runs
    WHERE state = 'pending'${inPartition ? " AND partition = $3" : ""} AND due_at <= now()
    ORDER BY due_at
    LIMIT $2
    FOR UPDATE SKIP LOCKED
  )
  UPDATE raw_runs r
  SET state = 'leased', lease_owner = $1, lease_expires_at = now() + interval '30 seconds',
      fencing_token = r.fencing_token + 1, started_at = now()
  FROM claimable
  WHERE r.id = claimable.id
  RETURNING r.id, r.fencing_token`;

/**
 * The plain `FOR UPDATE SKIP LOCKED` claim ($1 owner, $2 limit), minus the lease-expiry disjunct (nothing expires in a
 * no-op spike, and the OR would keep the planner off the partial index).
 */
export const RAW_CLAIM = { name: "raw-claim", text: rawClaimText(false) };

/**
 * The same claim in one partition ($3): walks the (partition, due_at) partial index in order and
 * stops after $2 rows, as Slotkeeper's per-partition claim does.
 */
export const RAW_CLAIM_IN_PARTITION = { name: "raw-claim-partition", text: rawClaimText(true) };

/**
 * Completion ($1 ids, $2 tokens, $3 owner): done only where this worker still holds the current
 * token. Run under RAW_FINISH_SESSION_OPTIONS it gets a generic plan that probes the primary key
 * once per id. A plan made for the values did not: the statistics (analysed before the spike, when every
 * lease_owner is NULL) say no row has this owner, so the planner scanned raw_runs for the owner's
 * rows and re-read the whole id array for each of them, rows held × batch comparisons per
 * statement (7–33 s a statement at 40,000 rows on PostgreSQL 18), and the ceiling's completions/s
 * read as an eighth of Slotkeeper's.
 */
export const RAW_FINISH = {
  name: "raw-finish",
  text: `UPDATE raw_runs r SET state = 'done', finished_at = now(), lease_owner = NULL, lease_expires_at = NULL
  FROM unnest($1::bigint[], $2::int[]) AS x(id, token)
  WHERE r.id = x.id AND r.fencing_token = x.token AND r.lease_owner = $3`,
};
