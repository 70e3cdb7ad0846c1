import { afterAll, describe, expect, it } from "vitest";
import { createDb, createPool, type Db } from "../db/client";
import { advanceClock, setClock } from "../testing/clock";
import { setupTestDatabase } from "../testing/db";
import { heartbeatWorker, registerWorker } from "../workers/registry";
import { acquirePartitions, listPartitionLeases, releasePartitions, type AcquireResult } from "./leases";
import { setPartitionCount } from "./count";

const LEASE = 15;
const pools: ReturnType<typeof createPool>[] = [];

/** A worker with its own pool: its own real connections, as a separate process would have. */
async function newWorker(id: string): Promise<{ id: string; db: Db }> {
  const pool = createPool(t.url, { max: 2, applicationName: `test:${id}` });
  pools.push(pool);
  const db = createDb(pool);
  await registerWorker(db, { id, concurrency: 1, handlers: [], version: "test" });
  return { id, db };
}

/** The invariant checked after every step: one holder per partition, and each worker's view matches the table. */
async function checkExclusive(results: Map<string, AcquireResult>) {
  const leases = await listPartitionLeases(t.db);
  const seen = new Map<number, string>();
  for (const [id, r] of results) {
    for (const p of r.held) {
      expect(seen.get(p), `partition ${p} held by ${seen.get(p)} and ${id}`).toBeUndefined();
      seen.set(p, id);
      expect(leases[p].owner).toBe(id);
    }
  }
  return leases;
}

async function round(workers: { id: string; db: Db }[], results: Map<string, AcquireResult>) {
  for (const w of workers) {
    await heartbeatWorker(w.db, w.id, 0);
    results.set(w.id, await acquirePartitions(w.db, { workerId: w.id, leaseSeconds: LEASE }));
    await checkExclusive(results);
  }
}

const t = setupTestDatabase({ clock: "2030-01-01T10:00:00Z" });
afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
});

describe("partition leases", () => {
  it("a lone worker takes every partition; joiners converge to a fair share; a dead worker's partitions are taken over with higher tokens", async () => {
    const results = new Map<string, AcquireResult>();
    const a = await newWorker("a");
    await round([a], results);
    expect(results.get("a")!.held).toHaveLength(16);

    // b joins: a gives up its surplus on its next pass, b takes it on the one after.
    const b = await newWorker("b");
    for (let i = 0; i < 2; i++) {
      await round([b, a], results);
      await advanceClock(t.pool, 5_000);
    }
    expect(results.get("a")!.held).toHaveLength(8);
    expect(results.get("b")!.held).toHaveLength(8);

    // c joins: ceil(16 / 3) = 6, so 6 + 6 + 4.
    const c = await newWorker("c");
    for (let i = 0; i < 3; i++) {
      await round([c, a, b], results);
      await advanceClock(t.pool, 5_000);
    }
    const sizes = [a, b, c].map((w) => results.get(w.id)!.held.length).sort();
    expect(sizes).toEqual([4, 6, 6]);
    const cHeld = results.get("c")!.held;
    const tokensBefore = (await listPartitionLeases(t.db)).map((l) => l.token);

    // c dies: it neither renews nor heartbeats. Past its lease a and b take its partitions; once it
    // also drops out of the live count (30 s), the share grows to 8 and everything is held again.
    results.delete("c");
    for (let i = 0; i < 8; i++) {
      await advanceClock(t.pool, 5_000);
      await round([a, b], results);
    }
    const leases = await checkExclusive(results);
    expect(leases.every((l) => l.owner === "a" || l.owner === "b")).toBe(true);
    expect(results.get("a")!.held.length + results.get("b")!.held.length).toBe(16);
    for (const p of cHeld) expect(leases[p].token).toBeGreaterThan(tokensBefore[p]);
  });

  it("renewal never changes the token; a worker whose lease expired gets it back only with a new token", async () => {
    await setClock(t.pool, "2030-01-02T10:00:00Z");
    const solo = await newWorker("solo");
    // The others from the first test are silent by now (a day later), so solo is alone.
    const first = await acquirePartitions(solo.db, { workerId: "solo", leaseSeconds: LEASE });
    expect(first.held).toHaveLength(16);
    await advanceClock(t.pool, 5_000);
    const renewed = await acquirePartitions(solo.db, { workerId: "solo", leaseSeconds: LEASE });
    expect(renewed.tokens).toEqual(first.tokens);
    expect(renewed.taken).toEqual([]);
    await advanceClock(t.pool, (LEASE + 1) * 1000);
    await heartbeatWorker(solo.db, "solo", 0);
    const back = await acquirePartitions(solo.db, { workerId: "solo", leaseSeconds: LEASE });
    expect(back.held).toHaveLength(16);
    for (const p of back.held) expect(back.tokens[p]).toBe(first.tokens[p] + 1);
    expect(await releasePartitions(solo.db, "solo")).toBe(16);
    expect((await listPartitionLeases(t.db)).every((l) => l.owner === null)).toBe(true);
  });

  it("workers acquiring at the same instant on separate connections never share a partition", async () => {
    await setClock(t.pool, "2030-01-03T10:00:00Z");
    const ws = await Promise.all(["p", "q", "r", "s"].map((id) => newWorker(id)));
    const results = new Map<string, AcquireResult>();
    for (let i = 0; i < 4; i++) {
      await Promise.all(ws.map((w) => heartbeatWorker(w.db, w.id, 0)));
      const rs = await Promise.all(ws.map((w) => acquirePartitions(w.db, { workerId: w.id, leaseSeconds: LEASE })));
      rs.forEach((r, j) => results.set(ws[j].id, r));
      await checkExclusive(results);
      await advanceClock(t.pool, 5_000);
    }
    expect([...results.values()].map((r) => r.held.length)).toEqual([4, 4, 4, 4]);
  });

  it("partitions of a holder that stopped or has no worker row are free at once, with a new token", async () => {
    await setClock(t.pool, "2030-01-05T10:00:00Z");
    const gone = await newWorker("gone");
    const first = await acquirePartitions(gone.db, { workerId: "gone", leaseSeconds: LEASE });
    await t.pool.query(`DELETE FROM workers WHERE id = 'gone'`);
    const heir = await newWorker("heir");
    const got = await acquirePartitions(heir.db, { workerId: "heir", leaseSeconds: LEASE });
    expect(got.held).toEqual(first.held);
    for (const p of got.held) expect(got.tokens[p]).toBe(first.tokens[p] + 1);
    await releasePartitions(heir.db, "heir");
  });

  it("a holder silent for 3 s has its partitions orphaned for the others, until it renews", async () => {
    await setClock(t.pool, "2030-01-06T10:00:00Z");
    const holder = await newWorker("holder");
    const first = await acquirePartitions(holder.db, { workerId: "holder", leaseSeconds: LEASE });
    expect(first.held).toHaveLength(16);
    expect(first.orphaned).toEqual([]);
    const other = await newWorker("other");
    const pass = async () => {
      await heartbeatWorker(other.db, "other", 0);
      return acquirePartitions(other.db, { workerId: "other", leaseSeconds: LEASE });
    };
    await advanceClock(t.pool, 2_999);
    expect((await pass()).orphaned).toEqual([]);
    // Three seconds without a renewal: orphaned, long before the 15 s lease would let "other" take them.
    await advanceClock(t.pool, 1);
    const seen = await pass();
    expect(seen.held).toEqual([]);
    expect(seen.orphaned).toEqual(first.held);
    // The clock stepped back by more than the threshold: a holder that does not renew again is
    // silent as well (its stamp now lies ahead of the clock), not alive until the clock catches up.
    await advanceClock(t.pool, -10_000);
    expect((await pass()).orphaned).toEqual(first.held);
    await advanceClock(t.pool, 10_000);
    // A renewal (the holder was only slow) ends it: it keeps its share (8 of 16 now that "other"
    // is live) and gives up the rest, which "other" takes; nothing is orphaned any more.
    const renewed = await acquirePartitions(holder.db, { workerId: "holder", leaseSeconds: LEASE });
    expect(renewed.held).toHaveLength(8);
    expect(renewed.orphaned).toEqual([]);
    const after = await pass();
    expect(after.held).toHaveLength(8);
    expect(after.orphaned).toEqual([]);
    // Released partitions nobody takes ("other" is at its share while a third worker counts as
    // live) are orphaned 3 s after their last renewal too, as is one held by a silent worker.
    await releasePartitions(holder.db, "holder");
    await t.pool.query(`UPDATE workers SET stopped_at = sk_now() WHERE id = 'holder'`);
    await t.pool.query(`INSERT INTO workers (id, hostname, pid, concurrency, last_heartbeat_at) VALUES ('silent', 'h', 1, 1, sk_now())`);
    await t.pool.query(`UPDATE partition_leases SET owner = 'silent', lease_expires_at = sk_now() + interval '1 hour' WHERE partition = $1`, [renewed.held[0]]);
    expect((await pass()).orphaned).toEqual([]);
    await advanceClock(t.pool, 3_000);
    const heir = await pass();
    expect(heir.held).toEqual(after.held);
    expect(heir.orphaned).toEqual(renewed.held);
    await releasePartitions(other.db, "other");
    await t.pool.query(`UPDATE workers SET stopped_at = sk_now() WHERE id IN ('other', 'silent')`);
  });

  it("a lowered partition count drops leases above it and re-hashes schedules", async () => {
    await setClock(t.pool, "2030-01-07T10:00:00Z");
    const w = await newWorker("shrink");
    expect((await acquirePartitions(w.db, { workerId: "shrink", leaseSeconds: LEASE })).held).toHaveLength(16);
    expect((await setPartitionCount(t.db, 4)).changed).toBe(true);
    const after = await acquirePartitions(w.db, { workerId: "shrink", leaseSeconds: LEASE });
    expect(after.held).toEqual([0, 1, 2, 3]);
    expect(await listPartitionLeases(t.db)).toHaveLength(4);
    expect((await setPartitionCount(t.db, 4)).changed).toBe(false);
  });

  it("a pass does not wait for a worker cut off in the middle of its own pass (its transaction left open on the server)", async () => {
    const a = await newWorker("cut-a");
    const b = await newWorker("cut-b");
    await acquirePartitions(a.db, { workerId: a.id, leaseSeconds: LEASE });
    // A's next pass renewed its rows and then its network went silent: the server keeps the
    // transaction open, holding those rows, until it gives up on the session.
    const stuck = await t.pool.connect();
    try {
      await stuck.query("BEGIN");
      await stuck.query("UPDATE partition_leases SET renewed_at = sk_now() WHERE owner = $1", [a.id]);
      // B's pass with a lock timeout: waiting on A's rows would fail it.
      const pool = createPool(t.url, { max: 1, applicationName: "test:cut-b-timeout" });
      pools.push(pool);
      const bTimed = createDb(pool);
      // One connection, set once: waiting on A's rows for more than a second fails the pass.
      const client = await pool.connect();
      await client.query("SET lock_timeout = '1s'");
      client.release();
      const r = await acquirePartitions(bTimed, { workerId: b.id, leaseSeconds: LEASE });
      expect(r.liveWorkers).toBeGreaterThanOrEqual(2);
    } finally {
      await stuck.query("ROLLBACK");
      stuck.release();
    }
  });
});
