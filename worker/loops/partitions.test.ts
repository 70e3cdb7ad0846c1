import pino from "pino";
import { describe, expect, it } from "vitest";
import { createDb, createPool } from "../../lib/db/client";
import { createLogger } from "../../lib/log";
import { listPartitionLeases } from "../../lib/partitions/leases";
import { setupTestDatabase } from "../../lib/testing/db";
import { waitUntil } from "../../lib/testing/wait";
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

  it("keeps using what it held while renewals fail, until that lease's safe end", async () => {
    await t.pool.query(`UPDATE workers SET stopped_at = sk_now() WHERE id = 'loop-a'`);
    const pool = createPool(t.url, { max: 1 });
    const db = createDb(pool);
    await registerWorker(db, { id: "loop-b", concurrency: 1, handlers: [], version: "test" });
    // The loop's own log says when a pass failed.
    const failures: number[] = [];
    const spy = pino({ level: "warn" }, { write: (line: string) => void (JSON.parse(line).event === "partitions:lease:error" && failures.push(performance.now())) });
    // A 9 s lease: usable for 7 s after the last renewal was sent (the margin is 2 s); a pass a second.
    const loop = startPartitionsLoop({ db, workerId: "loop-b", log: spy, leaseSeconds: 9 });
    await loop.ready;
    expect(loop.held()).toHaveLength(16);
    await pool.end(); // every later pass fails: the database is gone for this worker
    await waitUntil(() => failures.length > 0, 5_000, "a failed renewal");
    // A pass failed a second or so after the last renewal: the leases it renewed are still safely
    // unexpired, and still in use.
    expect(loop.held()).toHaveLength(16);
    // Once their safe end passes with no renewal, nothing is used any more.
    await waitUntil(() => loop.held().length === 0, 10_000, "the partitions to be given up");
    expect(failures.length).toBeGreaterThan(1);
    await loop.stop();
  });
});
