// The web process's pools run each statement in one backend: a plan the server would run in
// parallel runs without workers there. The oracle is the server's own account of the execution
// (EXPLAIN ANALYZE: "Workers Launched"), on the same statement through a pool with no such setting.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../testing/db";
import { planNodes, workersLaunched } from "../testing/plans";
import { createPool, WEB_POOL_OPTIONS } from "./client";

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 2 });
  await t.pool.query("CREATE TABLE wide AS SELECT g AS n, md5(g::text) AS s FROM generate_series(1, 200000) g");
  await t.pool.query("ANALYZE wide");
});
afterAll(() => t.drop());

/** Workers the server launched for one count over the table, parallel query made as cheap as can be. */
async function launchedThrough(opts: Parameters<typeof createPool>[1]): Promise<number> {
  const pool = createPool(t.url, { max: 1, ...opts });
  try {
    const c = await pool.connect();
    try {
      await c.query("SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0");
      return workersLaunched(await planNodes(c, "EXPLAIN (ANALYZE, FORMAT JSON) SELECT count(*) FROM wide WHERE s LIKE '%ab%'"));
    } finally {
      c.release();
    }
  } finally {
    await pool.end();
  }
}

describe("the web process's pools", () => {
  it("run a statement the server would parallelise in one backend", async () => {
    expect(await launchedThrough({})).toBeGreaterThan(0);
    expect(await launchedThrough(WEB_POOL_OPTIONS)).toBe(0);
  });
});
