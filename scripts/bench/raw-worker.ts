// The ceiling: the article's bare claim query and a batched, fenced completion, with a no-op
// "handler" and no Slotkeeper code. `node --import tsx scripts/bench/raw-worker.ts` with
// BENCH_DATABASE_URL, BENCH_BATCH, BENCH_LOOPS; stops on SIGTERM.
import pg from "pg";

const url = process.env.BENCH_DATABASE_URL!;
const batch = Number(process.env.BENCH_BATCH ?? 100);
const loops = Number(process.env.BENCH_LOOPS ?? 2);
const owner = `raw-${process.pid}`;
const pool = new pg.Pool({ connectionString: url, max: loops, application_name: "slotkeeper:bench-raw" });

// The article's claim, minus the lease-expiry disjunct (nothing expires in a no-op spike, and the OR
// would keep the planner off the partial index).
const CLAIM = {
  name: "raw-claim",
  text: `WITH claimable AS (
    SELECT id FROM raw_runs
    WHERE state = 'pending' AND due_at <= now()
    ORDER BY due_at
    LIMIT $2
    FOR UPDATE SKIP LOCKED
  )
  UPDATE raw_runs r
  SET state = 'leased', lease_owner = $1, lease_expires_at = now() + interval '30 seconds',
      fencing_token = r.fencing_token + 1, started_at = now()
  FROM claimable
  WHERE r.id = claimable.id
  RETURNING r.id, r.fencing_token`,
};

// Completion sets done only where this worker still holds the current token.
const FINISH = {
  name: "raw-finish",
  text: `UPDATE raw_runs r SET state = 'done', finished_at = now(), lease_owner = NULL, lease_expires_at = NULL
  FROM unnest($1::bigint[], $2::int[]) AS x(id, token)
  WHERE r.id = x.id AND r.fencing_token = x.token AND r.lease_owner = $3`,
};

let stopping = false;
process.on("SIGTERM", () => (stopping = true));

async function loop() {
  while (!stopping) {
    const { rows } = await pool.query<{ id: string; fencing_token: number }>({ ...CLAIM, values: [owner, batch] });
    if (rows.length === 0) {
      await new Promise((r) => setTimeout(r, 20));
      continue;
    }
    await pool.query({ ...FINISH, values: [rows.map((r) => r.id), rows.map((r) => r.fencing_token), owner] });
  }
}

Promise.all(Array.from({ length: loops }, loop))
  .then(() => pool.end())
  .then(() => process.exit(0))
  .catch((err) => {
    console.error(`raw worker: ${err?.stack ?? err}`);
    process.exit(1);
  });
