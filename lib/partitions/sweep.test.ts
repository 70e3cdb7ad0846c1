import { describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { advanceClock } from "../testing/clock";
import { setupTestDatabase } from "../testing/db";
import { markWorkerStopped, registerWorker } from "../workers/registry";
import { acquirePartitions } from "./leases";
import { setPartitionCount } from "./count";
import { listSweepPartitions } from "./sweep";

// Which partitions a worker sweeps: those another worker holds (and renews) that lacks one of its
// handlers or queues. The oracle is the table of who serves what, written out by hand below.
const T0 = new Date("2030-01-01T10:00:00Z");
const t = setupTestDatabase({ clock: T0 });
const info = (name: string) => ({ name, idempotent: true, description: name });

async function worker(id: string, handlers: string[], queues: Record<string, number> = { default: 4 }) {
  await registerWorker(t.db, { id, concurrency: 4, handlers: handlers.map(info), version: "test", queues });
}

describe("sweep partitions", () => {
  it("lists, per partition another worker holds, exactly the handlers and queues it lacks of mine", async () => {
    await setPartitionCount(t.db, 4);
    await worker("wa", ["alpha", "shared"]);
    await worker("wb", ["beta", "shared"], { default: 4, reports: 1 });
    await worker("wc", ["alpha", "shared"]);
    // wa takes 0,1 (share of 4 over 3 live = 2), wb 2,3; wc then finds nothing free.
    await acquirePartitions(t.db, { workerId: "wa", leaseSeconds: 15 });
    await acquirePartitions(t.db, { workerId: "wb", leaseSeconds: 15 });
    await acquirePartitions(t.db, { workerId: "wc", leaseSeconds: 15 });
    const owners = await t.pool.query("SELECT partition, owner FROM partition_leases ORDER BY partition");
    expect(owners.rows.map((r) => r.owner)).toEqual(["wa", "wa", "wb", "wb"]);

    // wa: wb lacks alpha (shared it has); wb serves every queue wa does.
    expect(await listSweepPartitions(t.db, "wa", 4)).toEqual([
      { partition: 2, handlers: ["alpha"], queues: [] },
      { partition: 3, handlers: ["alpha"], queues: [] },
    ]);
    // wb: wa lacks beta and the reports queue.
    expect(await listSweepPartitions(t.db, "wb", 4)).toEqual([
      { partition: 0, handlers: ["beta"], queues: ["reports"] },
      { partition: 1, handlers: ["beta"], queues: ["reports"] },
    ]);
    // wc serves what wa does: nothing to sweep in wa's partitions, alpha in wb's.
    expect(await listSweepPartitions(t.db, "wc", 4)).toEqual([
      { partition: 2, handlers: ["alpha"], queues: [] },
      { partition: 3, handlers: ["alpha"], queues: [] },
    ]);
    // No workers row: nothing it registered to serve, nothing to sweep.
    expect(await listSweepPartitions(t.db, "nobody", 4)).toEqual([]);
  });

  it("leaves out a stopped holder's partitions and silent (orphaned) ones: every worker claims there anyway", async () => {
    await setPartitionCount(t.db, 2);
    await worker("wa", ["alpha"]);
    await worker("wb", ["beta"]);
    await acquirePartitions(t.db, { workerId: "wa", leaseSeconds: 15 });
    await acquirePartitions(t.db, { workerId: "wb", leaseSeconds: 15 });
    expect(await listSweepPartitions(t.db, "wa", 2)).toEqual([{ partition: 1, handlers: ["alpha"], queues: [] }]);
    // wb stops renewing: after the orphan threshold (3 s) its partition is silent, not a sweep one.
    await advanceClock(t.pool, 4_000);
    await acquirePartitions(t.db, { workerId: "wa", leaseSeconds: 15 });
    expect(await listSweepPartitions(t.db, "wa", 2)).toEqual([]);
    const o = await acquirePartitions(t.db, { workerId: "wa", leaseSeconds: 15 });
    expect(o.orphaned).toEqual([1]);
    // wb renews again, then says it stopped: not a sweep partition either (it is free at once).
    await acquirePartitions(t.db, { workerId: "wb", leaseSeconds: 15 });
    expect(await listSweepPartitions(t.db, "wa", 2)).toEqual([{ partition: 1, handlers: ["alpha"], queues: [] }]);
    await markWorkerStopped(t.db, "wb");
    expect(await listSweepPartitions(t.db, "wa", 2)).toEqual([]);
    // Only partitions below the count.
    await t.db.execute(sql`UPDATE workers SET stopped_at = NULL WHERE id = 'wb'`);
    expect(await listSweepPartitions(t.db, "wa", 1)).toEqual([]);
  });
});
