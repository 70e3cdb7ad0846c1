// Max lateness is a promise the claim keeps: no slot's first attempt starts later than its due time
// + max lateness, whichever claim statement takes it (plain, limited), however many claimers race,
// and a slot found past it is recorded skipped `too_late` with no attempt. The database clock is
// stood at chosen instants; the oracle is arithmetic on the slots the test wrote (slot + max
// lateness against the clock it set), never the product's own bound.
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_ACTOR } from "../../audit/record";
import { createDb, createPool } from "../../db/client";
import { migrateDatabase } from "../../db/migrate";
import { setHandlerLimit } from "../../handlers/limits";
import { backfillSchedule } from "../../schedules/backfill";
import { isTooLate } from "../../schedules/missed";
import { runNow, updateSchedule } from "../../schedules/mutations";
import { advanceClock, setClock } from "../../testing/clock";
import { createTestDatabase, setupTestDatabase, type TestDatabase } from "../../testing/db";
import { makeRuns, makeSchedule, RUNS_BY_HAND, slots } from "../../testing/factories";
import { firstMigrations, indexOfMigration } from "../../testing/migrations";
import { readAttempts, readRun } from "../../testing/runs";
import { finishRuns } from "../finish";
import { runLatenessPass } from "../lateness-pass";
import { findQueueMismatches } from "../queue-consistency";
import { claimRuns, claimRunsDetailed } from ".";

const T0 = new Date("2030-01-01T10:00:00Z");
const at = (ms: number) => new Date(T0.getTime() + ms);
const t = setupTestDatabase({ clock: T0 });

/** The queue's bound of each run, by id (null: none). */
async function latestStarts(db: Pick<pg.Pool, "query">, ids: number[]): Promise<(number | null)[]> {
  const { rows } = await db.query<{ id: string; at: Date | null }>("SELECT run_id AS id, latest_start_at AS at FROM run_queue WHERE run_id = ANY($1::bigint[])", [ids]);
  const by = new Map(rows.map((r) => [Number(r.id), r.at === null ? null : r.at.getTime()]));
  return ids.map((id) => by.get(id) ?? null);
}

describe("one rule: when a slot is too late", () => {
  // Worked cases, stated by hand: a slot due at T0 with max lateness M may start at T0 + M exactly,
  // not a millisecond later; manual runs and backfills, and schedules without one, have no bound.
  const CASES: { name: string; dueMs: number; max: number | null; nowMs: number; origin?: string; tooLate: boolean }[] = [
    { name: "a millisecond inside", dueMs: 0, max: 6, nowMs: 5_999, tooLate: false },
    { name: "at the bound", dueMs: 0, max: 6, nowMs: 6_000, tooLate: false },
    { name: "a millisecond past", dueMs: 0, max: 6, nowMs: 6_001, tooLate: true },
    { name: "jitter moves the due time", dueMs: 2_500, max: 6, nowMs: 8_500, tooLate: false },
    { name: "jitter, past", dueMs: 2_500, max: 6, nowMs: 8_501, tooLate: true },
    { name: "max lateness 0, on time", dueMs: 0, max: 0, nowMs: 0, tooLate: false },
    { name: "max lateness 0, a millisecond late", dueMs: 0, max: 0, nowMs: 1, tooLate: true },
    { name: "a day", dueMs: 0, max: 86_400, nowMs: 86_400_001, tooLate: true },
    { name: "no max lateness", dueMs: 0, max: null, nowMs: 3_600_000, tooLate: false },
  ];

  it.each(CASES)("$name: the tick's rule (isTooLate) and the claim's (sk_latest_start) agree", async (c) => {
    expect(isTooLate(T0.getTime() + c.dueMs, T0.getTime() + c.nowMs, c.max)).toBe(c.tooLate);
    const { rows } = await t.pool.query<{ slot: boolean; manual: boolean; backfill: boolean }>(
      `SELECT (sk_latest_start('schedule', $1, $2) < $3) IS TRUE AS slot, (sk_latest_start('catch_up', $1, $2) < $3) IS TRUE AS catch_up,
              (sk_latest_start('manual', $1, $2) < $3) IS TRUE AS manual, (sk_latest_start('backfill', $1, $2) < $3) IS TRUE AS backfill`,
      [at(c.dueMs), c.max, at(c.nowMs)],
    );
    expect(rows[0]).toEqual({ slot: c.tooLate, catch_up: c.tooLate, manual: false, backfill: false });
  });
});

describe("the plain claim", () => {
  it("starts a slot claimed up to slot + max lateness and skips one claimed after it too_late, with no attempt", async () => {
    const s = await makeSchedule(t.db, { maxLatenessSeconds: 6, partition: 3 });
    // At T0: 10 s, 6.001 s, 6 s, 5 s and 0 s old.
    const slotsMs = [-10_000, -6_001, -6_000, -5_000, 0];
    const ids = await makeRuns(t.db, s.id, slotsMs.map((ms) => ({ scheduledFor: at(ms) })));
    const { claimed, settled } = await claimRunsDetailed(t.db, { workerId: "w1", partitions: [3], limit: 10 });
    const late = ids.filter((_, i) => T0.getTime() - at(slotsMs[i]).getTime() > 6_000);
    expect(late).toEqual([ids[0], ids[1]]);
    expect(claimed.map((r) => r.id).sort()).toEqual(ids.filter((id) => !late.includes(id)).sort());
    expect(settled.sort((a, b) => a.id - b.id)).toEqual(late.map((id) => ({ id, state: "skipped" })));
    for (const [i, id] of ids.entries()) {
      const row = await readRun(t.pool, id);
      if (late.includes(id)) {
        expect(row).toMatchObject({ state: "skipped", skip_reason: "too_late", attempts: 0, started_at: null });
        expect(await readAttempts(t.pool, id)).toEqual([]);
      } else {
        expect(row).toMatchObject({ state: "running", attempts: 1 });
        expect(row.started_at!.getTime() - at(slotsMs[i]).getTime()).toBeLessThanOrEqual(6_000);
      }
    }
    // Out of the queue: nothing is left to claim or to judge.
    expect(await claimRuns(t.db, { workerId: "w1", partitions: [3], limit: 10 })).toEqual([]);
    expect(await findQueueMismatches(t.db)).toEqual({ missing: 0, orphaned: 0, wrongState: 0, duplicated: 0, staleCopies: 0 });
  });

  it("skips a late slot too_late in the claim of a worker that serves named handlers (the per-handler statement), leaving other handlers' runs alone", async () => {
    const mine = await makeSchedule(t.db, { name: "served-late", handler: "http", maxLatenessSeconds: 6, partition: 5 });
    const other = await makeSchedule(t.db, { name: "other-late", handler: "sql-ledger", maxLatenessSeconds: 6, partition: 5 });
    const slotsMs = [-10_000, -6_001, -6_000, 0];
    const ids = await makeRuns(t.db, mine.id, slotsMs.map((ms) => ({ scheduledFor: at(ms) })));
    const [otherLate] = await makeRuns(t.db, other.id, [{ scheduledFor: at(-10_000) }]);
    const { claimed, settled } = await claimRunsDetailed(t.db, { workerId: "w1", partitions: [5], limit: 10, handlers: ["http"] });
    expect(claimed.map((r) => r.id).sort()).toEqual([ids[2], ids[3]].sort());
    expect(settled.sort((a, b) => a.id - b.id)).toEqual([ids[0], ids[1]].map((id) => ({ id, state: "skipped" })));
    for (const id of [ids[0], ids[1]]) expect(await readRun(t.pool, id)).toMatchObject({ state: "skipped", skip_reason: "too_late", attempts: 0, started_at: null });
    // A run of a handler this worker does not serve is not its to judge: it waits, unattempted.
    expect(await readRun(t.pool, otherLate)).toMatchObject({ state: "pending", attempts: 0 });
    expect(await findQueueMismatches(t.db)).toEqual({ missing: 0, orphaned: 0, wrongState: 0, duplicated: 0, staleCopies: 0 });
  });

  it("refuses a late slot in the claim across partitions too (tests and tools) and counts it against the batch", async () => {
    const s = await makeSchedule(t.db, { maxLatenessSeconds: 60 });
    const ids = await makeRuns(t.db, s.id, slots(T0.getTime() - 5 * 60_000, 5).map((d) => ({ scheduledFor: d })));
    // 5, 4, 3, 2 and 1 minutes old against one minute: the one a minute old is exactly at the bound.
    const first = await claimRunsDetailed(t.db, { workerId: "w1", partitions: null, limit: 3 });
    expect(first.claimed).toEqual([]);
    expect(first.settled.map((x) => x.id).sort()).toEqual(ids.slice(0, 3).sort());
    const second = await claimRunsDetailed(t.db, { workerId: "w1", partitions: null, limit: 3 });
    expect(second.claimed.map((r) => r.id)).toEqual([ids[4]]);
    expect(second.settled.map((x) => x.id)).toEqual([ids[3]]);
  });

  it("leaves a late slot that a lateness pass or another claimer holds to it, and never starts it", async () => {
    const s = await makeSchedule(t.db, { maxLatenessSeconds: 5 });
    const [id] = await makeRuns(t.db, s.id, [{ scheduledFor: at(-6_000) }]);
    const holder = await t.pool.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT 1 FROM run_queue WHERE run_id = $1 FOR UPDATE", [id]);
      expect(await claimRunsDetailed(t.db, { workerId: "w1", partitions: null, limit: 10 })).toMatchObject({ claimed: [], settled: [] });
      await holder.query("ROLLBACK");
    } finally {
      holder.release();
    }
    expect(await claimRunsDetailed(t.db, { workerId: "w1", partitions: null, limit: 10 })).toMatchObject({ claimed: [], settled: [{ id, state: "skipped" }] });
  });
});

describe("the limited claim", () => {
  it("overlap forbid: the late slot is skipped too_late, and the one after it starts at the next claim", async () => {
    const s = await makeSchedule(t.db, { maxLatenessSeconds: 6, overlap: "forbid" });
    const [late, onTime] = await makeRuns(t.db, s.id, [{ scheduledFor: at(-7_000) }, { scheduledFor: at(-1_000) }]);
    const first = await claimRunsDetailed(t.db, { workerId: "w1", partitions: [0], limit: 10 });
    expect(first.settled).toEqual([{ id: late, state: "skipped" }]);
    expect(await readRun(t.pool, late)).toMatchObject({ state: "skipped", skip_reason: "too_late", attempts: 0 });
    expect((await claimRuns(t.db, { workerId: "w1", partitions: [0], limit: 10 })).map((r) => r.id)).toEqual([onTime]);
  });

  it("overlap skip: too_late wins over overlap for a late slot behind a running one", async () => {
    const s = await makeSchedule(t.db, { maxLatenessSeconds: 6, overlap: "skip" });
    const [running, late, onTime] = await makeRuns(t.db, s.id, [{ scheduledFor: at(-20_000) }, { scheduledFor: at(-10_000) }, { scheduledFor: at(-2_000) }]);
    // The first starts in time (the clock at its slot), then the clock comes to T0.
    await setClock(t.pool, at(-20_000));
    expect((await claimRuns(t.db, { workerId: "w1", partitions: null, limit: 1 })).map((r) => r.id)).toEqual([running]);
    await setClock(t.pool, T0);
    await claimRunsDetailed(t.db, { workerId: "w1", partitions: null, limit: 10 });
    expect(await readRun(t.pool, late)).toMatchObject({ state: "skipped", skip_reason: "too_late" });
    expect(await readRun(t.pool, onTime)).toMatchObject({ state: "skipped", skip_reason: "overlap" });
  });

  it("maxConcurrent and a handler limit: a late slot is skipped even with no room, an on-time one waits for room", async () => {
    await setHandlerLimit(t.db, "noop", 1, SYSTEM_ACTOR);
    const s = await makeSchedule(t.db, { maxLatenessSeconds: 6, maxConcurrent: 1 });
    const [busy] = await makeRuns(t.db, s.id, [{ scheduledFor: at(-30_000) }]);
    await setClock(t.pool, at(-30_000));
    expect((await claimRuns(t.db, { workerId: "w1", partitions: null, limit: 10 })).map((r) => r.id)).toEqual([busy]);
    await setClock(t.pool, T0);
    const [late, onTime] = await makeRuns(t.db, s.id, [{ scheduledFor: at(-8_000) }, { scheduledFor: at(-3_000) }]);
    const r = await claimRunsDetailed(t.db, { workerId: "w1", partitions: null, limit: 10 });
    expect(r.claimed).toEqual([]);
    expect(r.settled).toEqual([{ id: late, state: "skipped" }]);
    expect(await readRun(t.pool, late)).toMatchObject({ state: "skipped", skip_reason: "too_late" });
    expect((await readRun(t.pool, onTime)).state).toBe("pending");
  });
});

describe("what max lateness does not bound", () => {
  it("a retry: its first attempt started in time, and attempt 2 starts however late", async () => {
    const s = await makeSchedule(t.db, { maxLatenessSeconds: 6 });
    const [id] = await makeRuns(t.db, s.id, [{ scheduledFor: at(-1_000) }]);
    const [first] = await claimRuns(t.db, { workerId: "w1", partitions: null, limit: 1 });
    await finishRuns(t.db, "w1", [{ id, attempt: first.attempt, outcome: "failed", error: "boom", retryDelaySeconds: 60 }]);
    await advanceClock(t.pool, 61_000);
    const [retry] = await claimRuns(t.db, { workerId: "w1", partitions: null, limit: 1 });
    expect(retry).toMatchObject({ id, attempt: 2 });
    expect(await readRun(t.pool, id)).toMatchObject({ state: "running", attempts: 2 });
  });

  it("a takeover of an expired lease, and manual runs and backfills however old", async () => {
    const s = await makeSchedule(t.db, { name: "exempt", maxLatenessSeconds: 6, leaseSeconds: 10 });
    const [slot] = await makeRuns(t.db, s.id, [{ scheduledFor: T0 }]);
    await claimRuns(t.db, { workerId: "w1", partitions: null, limit: 1 });
    const manual = await runNow(t.db, "exempt", SYSTEM_ACTOR);
    const backfill = await backfillSchedule(t.db, "exempt", { from: at(-3_600_000).toISOString(), to: at(-3_600_000).toISOString() }, SYSTEM_ACTOR, 10);
    expect(backfill.created).toBe(1);
    await advanceClock(t.pool, 3_600_000);
    const got = await claimRuns(t.db, { workerId: "w2", partitions: null, limit: 10 });
    expect(got.map((r) => [r.origin, r.attempt]).sort()).toEqual([["backfill", 1], ["manual", 1], ["schedule", 2]]);
    expect(got.find((r) => r.origin === "schedule")!.id).toBe(slot);
    expect(got.find((r) => r.origin === "manual")!.id).toBe(manual.id);
  });
});

describe("edits of max lateness reach the queued slots", () => {
  it("turned on, a waiting slot past it is refused; turned off, none is; running runs and retries get none", async () => {
    const s = await makeSchedule(t.db, { name: "edited", maxLatenessSeconds: null });
    const [old, future] = await makeRuns(t.db, s.id, [{ scheduledFor: at(-10_000) }, { scheduledFor: at(120_000) }]);
    expect(await latestStarts(t.pool, [old, future])).toEqual([null, null]);

    const on = await updateSchedule(t.db, "edited", { maxLatenessSeconds: 6 }, s.version, SYSTEM_ACTOR);
    expect(await latestStarts(t.pool, [old, future])).toEqual([at(-10_000 + 6_000).getTime(), at(120_000 + 6_000).getTime()]);
    expect(await findQueueMismatches(t.db)).toMatchObject({ staleCopies: 0 });
    const r = await claimRunsDetailed(t.db, { workerId: "w1", partitions: null, limit: 10 });
    expect(r).toMatchObject({ claimed: [], settled: [{ id: old, state: "skipped" }] });
    expect(await readRun(t.pool, old)).toMatchObject({ state: "skipped", skip_reason: "too_late" });

    const off = await updateSchedule(t.db, "edited", { maxLatenessSeconds: null }, on.version, SYSTEM_ACTOR);
    expect(await latestStarts(t.pool, [future])).toEqual([null]);
    // Ten minutes after its slot, far past the 6 s it had: it starts.
    await setClock(t.pool, at(120_000 + 600_000));
    const [started] = await claimRuns(t.db, { workerId: "w1", partitions: null, limit: 10 });
    expect(started.id).toBe(future);

    // Turned on again with a run running and one waiting on retry: neither gets a bound.
    const [retrying] = await makeRuns(t.db, s.id, [{ scheduledFor: at(700_000), runAfter: at(900_000), attempts: 1 }]);
    await updateSchedule(t.db, "edited", { maxLatenessSeconds: 1 }, off.version, SYSTEM_ACTOR);
    expect(await latestStarts(t.pool, [future, retrying])).toEqual([null, null]);
    expect(await findQueueMismatches(t.db)).toMatchObject({ staleCopies: 0 });
    await finishRuns(t.db, "w1", [{ id: future, attempt: started.attempt, outcome: "succeeded" }]);
    await setClock(t.pool, at(1_000_000));
    expect((await claimRuns(t.db, { workerId: "w2", partitions: null, limit: 10 })).map((x) => [x.id, x.attempt])).toEqual([[retrying, 2]]);
  });

  it("an edit by SQL reaches them as an edit by the API does", async () => {
    const s = await makeSchedule(t.db, { maxLatenessSeconds: 600 });
    const [id] = await makeRuns(t.db, s.id, [{ scheduledFor: at(-10_000) }]);
    expect(await latestStarts(t.pool, [id])).toEqual([at(590_000).getTime()]);
    await t.pool.query("UPDATE schedules SET max_lateness_seconds = 9 WHERE id = $1", [s.id]);
    expect(await latestStarts(t.pool, [id])).toEqual([at(-1_000).getTime()]);
  });
});

describe("racing claimers on real connections", () => {
  it("start every slot within its bound exactly once and skip every slot past it exactly once, beside the lateness pass", async () => {
    // Four partitions; in each, a plain schedule and a forbid schedule with max lateness 30 s, and
    // a plain one without: 40 slots each, one every 2 s, the oldest 80 s old at T0.
    const PARTITIONS = [0, 1, 2, 3];
    const EVERY_MS = 2_000;
    const MAX_S = 30;
    const expectLate = new Set<number>();
    const expectStart = new Set<number>();
    const forbid = new Set<number>();
    for (const partition of PARTITIONS) {
      for (const o of [{ maxLatenessSeconds: MAX_S }, { maxLatenessSeconds: MAX_S, overlap: "forbid" as const }, { maxLatenessSeconds: null }]) {
        // Catch-up all: the lateness pass beside the claimers may only skip slots too_late.
        const s = await makeSchedule(t.db, { ...RUNS_BY_HAND, partition, ...o });
        const when = slots(T0.getTime() - 80_000, 40, EVERY_MS);
        const ids = await makeRuns(t.db, s.id, when.map((d) => ({ scheduledFor: d })));
        ids.forEach((id, i) => {
          if (o.overlap === "forbid") forbid.add(id);
          // Forbid runs one at a time, each run finishing at once (below), so its slots are judged at T0.
          if (o.maxLatenessSeconds !== null && T0.getTime() - when[i].getTime() > MAX_S * 1000) expectLate.add(id);
          else expectStart.add(id);
        });
      }
    }
    const pools = Array.from({ length: 4 }, () => createPool(t.url, { max: 1 }));
    const lateness = createPool(t.url, { max: 1 });
    try {
      let stop = false;
      const passes = (async () => {
        let n = 0;
        while (!stop) n += (await runLatenessPass(createDb(lateness), { partitions: null, graceSeconds: 3600 })).tooLate;
        return n;
      })();
      const got = await Promise.all(
        pools.map(async (p, i) => {
          const db = createDb(p);
          const started: number[] = [];
          for (let idle = 0; idle < 5; ) {
            const { claimed, settled } = await claimRunsDetailed(db, { workerId: `w${i}`, partitions: PARTITIONS, limit: 7 });
            started.push(...claimed.map((c) => c.id));
            // Finish at once, so a forbid schedule's next slot may start.
            await finishRuns(db, `w${i}`, claimed.map((c) => ({ id: c.id, attempt: c.attempt, outcome: "succeeded" as const })));
            idle = claimed.length + settled.length === 0 ? idle + 1 : 0;
          }
          return started;
        }),
      );
      stop = true;
      await passes;
      const started = got.flat();
      expect(started).toHaveLength(new Set(started).size);
      expect(new Set(started)).toEqual(expectStart);
      const { rows } = await t.pool.query<{ id: string; state: string; skip_reason: string | null; attempts: number; first: Date | null; slot: Date }>(
        `SELECT r.id, r.state, r.skip_reason, r.attempts, (SELECT min(a.started_at) FROM run_attempts a WHERE a.run_id = r.id) AS first, r.scheduled_for AS slot FROM run_status r`,
      );
      for (const r of rows) {
        const id = Number(r.id);
        if (expectLate.has(id)) {
          expect(r, `run ${id}`).toMatchObject({ state: "skipped", skip_reason: "too_late", attempts: 0, first: null });
        } else {
          expect(r, `run ${id}`).toMatchObject({ state: "done", attempts: 1 });
          expect(r.first).not.toBeNull();
        }
      }
      expect(rows).toHaveLength(expectLate.size + expectStart.size);
      expect(await findQueueMismatches(t.db)).toEqual({ missing: 0, orphaned: 0, wrongState: 0, duplicated: 0, staleCopies: 0 });
      expect(forbid.size).toBe(160);
    } finally {
      await Promise.all([...pools, lateness].map((p) => p.end()));
    }
  });
});

describe("migration 0031", () => {
  let old: TestDatabase;
  beforeAll(async () => {
    old = await createTestDatabase({ template: "empty" });
    await migrateDatabase(old.url, { migrationsFolder: firstMigrations(indexOfMigration("0031_queue_latest_start")) });
  });
  afterAll(async () => {
    await old?.drop();
  });

  it("gives the never-attempted slots already queued their bound, and nothing else one", async () => {
    await setClock(old.pool, T0);
    const schedule = async (name: string, max: number | null) =>
      Number(
        (
          await old.pool.query<{ id: string }>(
            `INSERT INTO schedules (name, handler, every_seconds, next_slot_at, partition, max_lateness_seconds) VALUES ($1, 'noop', 60, $2, 0, $3) RETURNING id`,
            [name, at(3_600_000), max],
          )
        ).rows[0].id,
      );
    const bounded = await schedule("bounded", 45);
    const free = await schedule("free", null);
    const run = async (scheduleId: number, slotMs: number, o: { origin?: string; attempts?: number; runAfterMs?: number; state?: string } = {}) =>
      Number(
        (
          await old.pool.query<{ id: string }>(
            `INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, max_attempts, state, origin, attempts)
             VALUES ($1, 0, $2, $2, $3, 3, $4, $5, $6) RETURNING id`,
            [scheduleId, at(slotMs), at(o.runAfterMs ?? slotMs), o.state ?? "pending", o.origin ?? "schedule", o.attempts ?? 0],
          )
        ).rows[0].id,
      );
    const ids = {
      slot: await run(bounded, -10_000),
      catchUp: await run(bounded, -120_000, { origin: "catch_up" }),
      retry: await run(bounded, -60_000, { attempts: 1, runAfterMs: 30_000 }),
      manual: await run(bounded, -5_000, { origin: "manual" }),
      dead: await run(bounded, -600_000, { state: "dead", attempts: 3 }),
      unbounded: await run(free, -10_000),
    };
    await migrateDatabase(old.url);
    const got = await latestStarts(old.pool, Object.values(ids));
    expect(Object.fromEntries(Object.keys(ids).map((k, i) => [k, got[i]]))).toEqual({
      slot: at(-10_000 + 45_000).getTime(),
      catchUp: at(-120_000 + 45_000).getTime(),
      retry: null,
      manual: null,
      dead: null,
      unbounded: null,
    });
    expect(await findQueueMismatches(old.db)).toEqual({ missing: 0, orphaned: 0, wrongState: 0, duplicated: 0, staleCopies: 0 });
    // And the claim keeps it: the catch-up slot is past its bound, the slot is not.
    const r = await claimRunsDetailed(old.db, { workerId: "w1", partitions: null, limit: 10 });
    expect(r.settled).toEqual([{ id: ids.catchUp, state: "skipped" }]);
    expect(r.claimed.map((c) => c.id).sort()).toEqual([ids.slot, ids.manual, ids.unbounded].sort());
  });
});
