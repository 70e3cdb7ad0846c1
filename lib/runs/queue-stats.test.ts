import { describe, expect, it } from "vitest";
import { preparedStatements } from "../db/prepared";
import { setupTestDatabase } from "../testing/db";
import { seqScannedTables } from "../testing/plans";
import "./claim";
import { ANALYZE_AFTER_RUNS, analyzeQueue, queueNeedsAnalyze } from "./queue-stats";

const t = setupTestDatabase({ poolSize: 3 });

describe("run_queue statistics and the hot statements' cached plans", () => {
  it("analyses after 10,000 queued runs, or as many as the queue held at the last analysis", () => {
    expect(queueNeedsAnalyze(ANALYZE_AFTER_RUNS - 1, 0)).toBe(false);
    expect(queueNeedsAnalyze(ANALYZE_AFTER_RUNS, 0)).toBe(true);
    expect(queueNeedsAnalyze(150_000, 200_000)).toBe(false);
    expect(queueNeedsAnalyze(200_000, 200_000)).toBe(true);
  });

  it("a claim first planned on an empty queue scans the whole queue until it is analysed, then finds its rows by TID", async () => {
    const claim = preparedStatements.find((s) => s.name.startsWith("sk_claim_") && s.params.some((p) => (p as { name?: string }).name === "partition"))!;
    // The statement's parameters in its own order; handlers and queues null: a worker serving every handler and queue.
    const values: Record<string, string> = { partition: "0", limit: "500", workerId: "'w'", handlers: "NULL", queues: "NULL" };
    const args = claim.params.map((p) => values[(p as { name: string }).name]).join(", ");
    const client = await t.pool.connect();
    const scans = async () => {
      // In a transaction rolled back: EXPLAIN ANALYZE runs the claim, and what it claimed stays pending.
      await client.query("BEGIN");
      try {
        return await seqScannedTables(client, `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE hot(${args})`);
      } finally {
        await client.query("ROLLBACK");
      }
    };
    try {
      await client.query("SET plan_cache_mode = force_generic_plan");
      await client.query(`PREPARE hot AS ${claim.text}`);
      expect(await scans()).toEqual(["run_queue"]);
      // The tick queues 20,000 runs; this connection's plan is the one made for an empty queue.
      await t.pool.query(`INSERT INTO schedules (name, handler, every_seconds, enabled, next_slot_at, partition, catch_up)
        SELECT 'grow-' || g, 'noop', 3600, false, '2100-01-01', 0, 'all' FROM generate_series(1, 20000) g`);
      await t.pool.query(`INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, origin, max_attempts)
        SELECT id, 0, '2020-01-01', '2020-01-01', '2020-01-01', 'pending', 'schedule', 6 FROM schedules`);
      expect(await scans()).toEqual(["run_queue"]);
      // Analysed by another connection (the tick loop's): every cached plan of the queue is made again.
      expect(await analyzeQueue(t.db)).toBe(20_000);
      expect(await scans()).toEqual([]);
    } finally {
      await client.query("DEALLOCATE ALL").catch(() => {});
      client.release();
    }
  });
});
