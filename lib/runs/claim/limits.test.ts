import { describe, expect, it } from "vitest";
import { SYSTEM_ACTOR } from "../../audit/record";
import { createDb, createPool, type Db } from "../../db/client";
import { setHandlerLimit } from "../../handlers/limits";
import { setupTestDatabase } from "../../testing/db";
import { makeRuns, makeSchedule, slots } from "../../testing/factories";
import { finishRuns } from "../finish";
import { findQueueMismatches } from "../queue-consistency";
import { claimExclusive } from "./exclusive";
import { claimRunsDetailed } from "./index";

// Queues and limits on the claim itself, against real connections. The oracle is the queue read
// back in SQL (how many runs are running per schedule, per handler), not the claim's own answer.
const T0 = new Date("2030-01-01T10:00:00Z");
const t = setupTestDatabase({ clock: T0 });
const due = (n: number) => slots(T0.getTime() - n * 1000, n, 1000).map((d) => ({ scheduledFor: d }));
const running = async (where: string) =>
  (await t.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM run_queue q WHERE q.state = 'running' AND ${where}`)).rows[0].n;

/** `claimers` claims at once, each on its own connection, as workers do: by queue, one partition. */
async function claimAtOnce(claimers: number, queues: Record<string, number> | null, limit = 50) {
  const pools = Array.from({ length: claimers }, () => createPool(t.url, { max: 1 }));
  try {
    const got = await Promise.all(pools.map((p, i) => claimRunsDetailed(createDb(p), { workerId: `w${i}`, partitions: [0], limit, rescueExpired: false, queues })));
    return got.flatMap((g) => g.claimed);
  } finally {
    await Promise.all(pools.map((p) => p.end()));
  }
}

describe("queues", () => {
  it("claims only runs of the queues named, each up to its own free slots, and says which queue each run took", async () => {
    const reports = (await makeSchedule(t.db, { queue: "reports" })).id;
    const plain = (await makeSchedule(t.db)).id;
    await makeRuns(t.db, reports, due(5));
    await makeRuns(t.db, plain, due(5));
    const none = await claimRunsDetailed(t.db, { workerId: "w", partitions: [0], limit: 0, queues: { other: 10 } });
    expect(none.claimed).toEqual([]);
    const got = await claimRunsDetailed(t.db, { workerId: "w", partitions: [0], limit: 0, queues: { default: 3, reports: 1 } });
    expect(got.claimed.filter((r) => r.queue === "default").map((r) => r.scheduleId)).toEqual([plain, plain, plain]);
    expect(got.claimed.filter((r) => r.queue === "reports").map((r) => r.scheduleId)).toEqual([reports]);
    expect(await running(`q.schedule_id = ${reports}`)).toBe(1);
    expect(await running(`q.schedule_id = ${plain}`)).toBe(3);
  });

  it("moves a schedule's queued runs when its queue changes", async () => {
    const s = await makeSchedule(t.db);
    await makeRuns(t.db, s.id, due(3));
    await t.pool.query("UPDATE schedules SET queue = 'reports' WHERE id = $1", [s.id]);
    expect((await claimRunsDetailed(t.db, { workerId: "w", partitions: [0], limit: 0, queues: { default: 10 } })).claimed).toEqual([]);
    expect((await claimRunsDetailed(t.db, { workerId: "w", partitions: [0], limit: 0, queues: { reports: 10 } })).claimed).toHaveLength(3);
    expect(await findQueueMismatches(t.db)).toMatchObject({ staleCopies: 0 });
  });
});

describe("maxConcurrent", () => {
  it("eight claimers at once start exactly maxConcurrent runs of a schedule, earliest slots first; a finish frees one slot", async () => {
    const s = (await makeSchedule(t.db, { maxConcurrent: 3 })).id;
    const ids = await makeRuns(t.db, s, due(20));
    const claimed = await claimAtOnce(8, { default: 10 });
    expect(await running(`q.schedule_id = ${s}`)).toBe(3);
    expect(claimed.map((r) => r.id).sort((a, b) => a - b)).toEqual(ids.slice(0, 3));
    // Another round while three run: nothing more.
    expect(await claimAtOnce(4, { default: 10 })).toEqual([]);
    const first = claimed.find((r) => r.id === ids[0])!;
    const owner = (await t.pool.query<{ o: string }>("SELECT lease_owner AS o FROM run_queue WHERE run_id = $1", [first.id])).rows[0].o;
    expect((await finishRuns(t.db, owner, [{ id: first.id, attempt: first.attempt, outcome: "succeeded" }])).applied).toBe(1);
    const next = await claimAtOnce(4, { default: 10 });
    expect(next.map((r) => r.id)).toEqual([ids[3]]);
    expect(await running(`q.schedule_id = ${s}`)).toBe(3);
  });

  it("counts a later slot that is running: at most n at once whatever order the runs came in", async () => {
    const s = (await makeSchedule(t.db, { maxConcurrent: 1 })).id;
    const [, late] = await makeRuns(t.db, s, due(2));
    // The later slot runs first (say, an earlier one was backfilled after it started).
    await t.pool.query("UPDATE run_queue SET state = 'running', attempts = 1, lease_owner = 'x', lease_expires_at = $2 WHERE run_id = $1", [late, new Date(T0.getTime() + 60_000)]);
    expect(await claimAtOnce(3, { default: 10 })).toEqual([]);
  });

  it("overlap forbid is a limit of one, through the same claim", async () => {
    const s = (await makeSchedule(t.db, { overlap: "forbid" })).id;
    const ids = await makeRuns(t.db, s, due(6));
    const claimed = await claimAtOnce(6, { default: 10 });
    expect(claimed.map((r) => r.id)).toEqual([ids[0]]);
    expect(await running(`q.schedule_id = ${s}`)).toBe(1);
  });
});

describe("handler limits", () => {
  it("caps a handler's running runs across schedules and claimers; removing the limit sends its runs back to the plain claim", async () => {
    const a = (await makeSchedule(t.db, { handler: "billing" })).id;
    const b = (await makeSchedule(t.db, { handler: "billing" })).id;
    const other = (await makeSchedule(t.db)).id;
    await makeRuns(t.db, a, due(10));
    await makeRuns(t.db, b, due(10));
    await makeRuns(t.db, other, due(4));
    await setHandlerLimit(t.db, "billing", 4, SYSTEM_ACTOR);
    expect((await t.pool.query("SELECT DISTINCT overlap FROM run_queue WHERE handler = 'billing'")).rows).toEqual([{ overlap: "limited" }]);
    await claimAtOnce(8, { default: 50 });
    expect(await running("q.handler = 'billing'")).toBe(4);
    expect(await running(`q.schedule_id = ${other}`)).toBe(4);
    expect(await findQueueMismatches(t.db)).toMatchObject({ staleCopies: 0 });
    // A new slot of a limited handler is queued limited too (runs_queue_insert).
    await makeRuns(t.db, a, [{ scheduledFor: new Date(T0.getTime() - 500) }]);
    expect((await t.pool.query("SELECT count(*)::int AS n FROM run_queue WHERE handler = 'billing' AND overlap <> 'limited'")).rows[0].n).toBe(0);

    await setHandlerLimit(t.db, "billing", null, SYSTEM_ACTOR);
    expect((await t.pool.query("SELECT DISTINCT overlap FROM run_queue WHERE handler = 'billing'")).rows).toEqual([{ overlap: "allow" }]);
    await claimAtOnce(2, { default: 50 });
    expect(await running("q.handler = 'billing'")).toBe(21);
    expect(await findQueueMismatches(t.db)).toMatchObject({ staleCopies: 0 });
  });

  it("applies the schedule's and the handler's limit together", async () => {
    const a = (await makeSchedule(t.db, { handler: "h2", maxConcurrent: 1 })).id;
    const b = (await makeSchedule(t.db, { handler: "h2" })).id;
    await makeRuns(t.db, a, due(5));
    await makeRuns(t.db, b, due(5));
    await setHandlerLimit(t.db, "h2", 3, SYSTEM_ACTOR);
    await claimAtOnce(5, { default: 50 });
    expect(await running(`q.schedule_id = ${a}`)).toBe(1);
    expect(await running("q.handler = 'h2'")).toBe(3);
  });

  it("a claim that finds a handler's key taken leaves that handler's schedules to the claim that has it", async () => {
    const a = (await makeSchedule(t.db, { handler: "h2", maxConcurrent: 1 })).id;
    const b = (await makeSchedule(t.db, { handler: "h2" })).id;
    await makeRuns(t.db, a, due(5));
    await makeRuns(t.db, b, due(5));
    await setHandlerLimit(t.db, "h2", 3, SYSTEM_ACTOR);
    // The interleaving of two claims at once, held still: another claim holds the handler's key
    // while this one looks; this one stays open (its keys with it) while the next one claims.
    const other = createPool(t.url, { max: 1 });
    const slow = createPool(t.url, { max: 1 });
    const key = "hashtextextended('sk_limit:h:h2', 0)";
    try {
      const holder = await other.connect();
      await holder.query(`SELECT pg_advisory_lock(${key})`);
      await createDb(slow).transaction(async (tx) => {
        const first = await claimExclusive(tx as unknown as Db, "slow", [0], 50);
        expect(first.claimed).toEqual([]);
        await holder.query(`SELECT pg_advisory_unlock(${key})`);
        holder.release();
        await claimAtOnce(1, { default: 50 });
      });
      expect(await running(`q.schedule_id = ${a}`)).toBe(1);
      expect(await running(`q.schedule_id = ${b}`)).toBe(2);
    } finally {
      await Promise.all([other.end(), slow.end()]);
    }
  });
});
