// The raw ceiling's finish under its connections' session settings, on a table as the spike meets it:
// 40,000 rows analysed while every lease_owner is NULL, a batch of them then leased to one owner.
// A ceiling whose statements scan the table is no ceiling (its finish once read the whole table and
// re-read the id array per leased row, so Slotkeeper's completions/s came out 8.5 times "raw").
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setupTestDatabase } from "../../lib/testing/db";
import { seqScannedTables } from "../../lib/testing/plans";
import { RAW_FINISH, RAW_FINISH_SESSION_OPTIONS, rawTableDdl } from "./raw-statements";

const ROWS = 40_000;
const BATCH = 2_000;
const t = setupTestDatabase({ reset: false });
// As raw-worker.ts connects to finish: with Slotkeeper's session settings.
let finishes: pg.Pool;

beforeAll(async () => {
  for (const statement of rawTableDdl("partitioned")) await t.pool.query(statement);
  await t.pool.query(`INSERT INTO raw_runs (job_id, partition, due_at) SELECT g, mod(g, 16), now() - interval '1 second' FROM generate_series(1, $1::int) g`, [ROWS]);
  await t.pool.query("VACUUM ANALYZE raw_runs");
  finishes = new pg.Pool({ connectionString: t.url, max: 1, options: RAW_FINISH_SESSION_OPTIONS });
});
afterAll(async () => {
  await finishes?.end();
});

describe("the raw ceiling's finish", () => {
  it(`of a ${BATCH}-run batch probes the primary key per run, and completes exactly that batch`, async () => {
    const { rows: leased } = await t.pool.query<{ id: string; fencing_token: number }>(
      `UPDATE raw_runs SET state = 'leased', lease_owner = 'o', fencing_token = 1, started_at = now() WHERE id <= $1 RETURNING id, fencing_token`,
      [BATCH],
    );
    const ids = `'{${leased.map((r) => r.id).join(",")}}'`;
    const tokens = `'{${leased.map((r) => r.fencing_token).join(",")}}'`;
    const client = await finishes.connect();
    try {
      await client.query(`PREPARE hot AS ${RAW_FINISH.text}`);
      expect(await seqScannedTables(client, `EXPLAIN (FORMAT JSON) EXECUTE hot(${ids}, ${tokens}, 'o')`)).toEqual([]);
      // As the worker runs it: a named statement, values bound.
      const done = await client.query({ ...RAW_FINISH, values: [leased.map((r) => r.id), leased.map((r) => r.fencing_token), "o"] });
      expect(done.rowCount).toBe(BATCH);
      // A stale token or another owner completes nothing (fencing).
      const stale = await client.query({ ...RAW_FINISH, values: [leased.map((r) => r.id), leased.map(() => 0), "o"] });
      expect(stale.rowCount).toBe(0);
    } finally {
      await client.query("DEALLOCATE ALL").catch(() => {});
      client.release();
    }
    const { rows } = await t.pool.query<{ state: string; n: number }>(`SELECT state, count(*)::int AS n FROM raw_runs GROUP BY 1 ORDER BY 1`);
    expect(rows).toEqual([{ state: "done", n: BATCH }, { state: "pending", n: ROWS - BATCH }]);
  });
});
