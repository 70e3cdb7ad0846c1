import { describe, expect, it } from "vitest";
import { createDb, createPool } from "../../lib/db/client";
import { createLogger } from "../../lib/log";
import { listPartitionLeases } from "../../lib/partitions/leases";
import { setupTestDatabase } from "../../lib/testing/db";
import { registerWorker } from "../../lib/workers/registry";
import { startPartitionsLoop } from "./partitions";

const log = createLogger("test", "silent");

const t = setupTestDatabase({ clock: "2030-01-01T10:00:00Z" });

describe("partitions loop", () => {
  it("holds every partition once ready when alone, and releases them on stop", async () => {
    await registerWorker(t.db, { id: "loop-a", concurrency: 1, handlers: [], version: "test" });
    const loop = startPartitionsLoop({ db: t.db, workerId: "loop-a", log });
    await loop.ready;
    expect(loop.held()).toHaveLength(16);
    await loop.stop();
    expect(loop.held()).toEqual([]);
    expect((await listPartitionLeases(t.db)).every((l) => l.owner === null)).toBe(true);
  });

  it("stops using every partition at once when a renewal fails", async () => {
    await t.pool.query(`UPDATE workers SET stopped_at = sk_now() WHERE id = 'loop-a'`);
    const pool = createPool(t.url, { max: 1 });
    const db = createDb(pool);
    await registerWorker(db, { id: "loop-b", concurrency: 1, handlers: [], version: "test" });
    const changes: number[][] = [];
    const loop = startPartitionsLoop({ db, workerId: "loop-b", log, onChange: (held) => changes.push(held) });
    await loop.ready;
    expect(loop.held()).toHaveLength(16);
    await pool.end(); // every later pass fails: the database is gone for this worker
    const until = Date.now() + 5_000;
    while (loop.held().length > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(loop.held()).toEqual([]);
    expect(changes.at(-1)).toEqual([]);
    await loop.stop();
  });
});
