import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runClockFrom } from "../lib/testing/clock";
import { setupTestDatabase } from "../lib/testing/db";
import { makeRuns, makeSchedule, RUNS_BY_HAND, slots } from "../lib/testing/factories";
import { startReceiver, type Received } from "../lib/testing/receiver";
import { readRun } from "../lib/testing/runs";
import { startWorkers } from "../lib/testing/spawn";
import { waitUntil } from "../lib/testing/wait";

// Several real worker processes on one database. What the handlers did is counted where they did
// it: the `http` handler calls this file's receiver, which records every request with its
// idempotency key (schedule + slot) and when it arrived and was answered. Slotkeeper's own tables
// are read only to know that the runs have settled.
const T0 = new Date("2030-01-01T10:00:00Z");
const t = setupTestDatabase();

/** The idempotency key of a slot's every attempt (docs/handlers.md): sk:<schedule id>:<slot instant>. */
const slotKey = (scheduleId: number, slot: Date) => `sk:${scheduleId}:${slot.toISOString()}`;

describe("many workers on one database", () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
  });

  it("4 processes, 2,000 runs: every slot's handler ran exactly once, and every run is done", async () => {
    await runClockFrom(t.pool, T0);
    const started = Date.now();
    await startWorkers(t.url, ["many-1", "many-2", "many-3", "many-4"], { SLOTKEEPER_CONCURRENCY: "50" });
    // 20 schedules spread over all 16 partitions (each worker claims in the partitions it holds), 100 due slots each.
    const expected = new Set<string>();
    const ids: number[] = [];
    for (let i = 0; i < 20; i++) {
      const s = await makeSchedule(t.db, { ...RUNS_BY_HAND, handler: "http", payload: { url: `${receiver.url}/run` }, partition: i % 16 });
      const mine = slots(T0.getTime() - 100 * 60_000, 100);
      ids.push(...(await makeRuns(t.db, s.id, mine.map((scheduledFor) => ({ scheduledFor })))));
      for (const slot of mine) expected.add(slotKey(s.id, slot));
    }
    await waitUntil(() => receiver.received.length >= 2000, 90_000, "2,000 requests at the receiver");
    await waitUntil(async () => (await t.pool.query("SELECT count(*)::int AS n FROM runs WHERE state = 'done'")).rows[0].n === 2000, 60_000, "2,000 done runs");
    const keys = receiver.keys();
    expect(keys).toHaveLength(2000);
    expect(new Set(keys)).toEqual(expected);
    expect((await t.pool.query("SELECT count(*)::int AS n FROM run_status WHERE state <> 'done'")).rows[0].n).toBe(0);
    // Every worker took a share (SKIP LOCKED spreads the work rather than serialising it).
    const { rows: byWorker } = await t.pool.query<{ worker_id: string; n: number }>("SELECT worker_id, count(*)::int AS n FROM runs GROUP BY 1 ORDER BY 1");
    console.log(JSON.stringify({ event: "test:many-workers", runs: ids.length, workers: 4, seconds: (Date.now() - started) / 1000, byWorker }));
    expect(byWorker.length).toBeGreaterThanOrEqual(2);
  }, 180_000);
});

describe("overlap policies with concurrent workers", () => {
  const HOLD_MS = 1500;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    // Each call takes HOLD_MS at the receiver: [arrivedAt, answeredAt] is when that run's handler ran.
    receiver = await startReceiver(() => 200, { holdMs: HOLD_MS });
  });
  afterAll(async () => {
    await receiver?.close();
  });

  const setup = async (overlap: "allow" | "forbid" | "skip") => {
    receiver.received.length = 0;
    await runClockFrom(t.pool, T0);
    await startWorkers(t.url, ["ov-1", "ov-2", "ov-3"]);
    const s = await makeSchedule(t.db, { ...RUNS_BY_HAND, handler: "http", payload: { url: `${receiver.url}/${overlap}` }, overlap });
    const slotsDue = [3, 2, 1].map((n) => new Date(T0.getTime() - n * 1000));
    const ids = await makeRuns(t.db, s.id, slotsDue.map((scheduledFor) => ({ scheduledFor })));
    return { keys: slotsDue.map((slot) => slotKey(s.id, slot)), ids };
  };
  const settled = (ids: number[]) => async () => {
    const rows = await Promise.all(ids.map((id) => readRun(t.pool, id)));
    return rows.every((r) => ["done", "skipped", "dead"].includes(r.state));
  };
  /** The calls the receiver answered, one per slot key, in the order of `keys`. */
  const calls = (keys: string[]) => {
    const byKey = new Map<string, Received[]>();
    for (const r of receiver.received) byKey.set(String(r.headers["idempotency-key"]), [...(byKey.get(String(r.headers["idempotency-key"])) ?? []), r]);
    return keys.map((k) => byKey.get(k) ?? []);
  };
  const overlaps = (a: Received, b: Received) => a.arrivedAt < b.answeredAt! && b.arrivedAt < a.answeredAt!;

  it("allow: runs of one schedule run side by side", async () => {
    const { keys, ids } = await setup("allow");
    await waitUntil(settled(ids), 60_000, "three settled runs");
    const c = calls(keys);
    expect(c.map((x) => x.length)).toEqual([1, 1, 1]);
    const [a, b, d] = c.map((x) => x[0]);
    expect(overlaps(a, b) || overlaps(b, d) || overlaps(a, d)).toBe(true);
  }, 120_000);

  it("forbid: each slot waits for the previous run to finish, in slot order", async () => {
    const { keys, ids } = await setup("forbid");
    await waitUntil(settled(ids), 60_000, "three settled runs");
    for (const id of ids) expect((await readRun(t.pool, id)).state).toBe("done");
    const c = calls(keys);
    expect(c.map((x) => x.length)).toEqual([1, 1, 1]);
    const [a, b, d] = c.map((x) => x[0]);
    expect(a.answeredAt! <= b.arrivedAt && b.answeredAt! <= d.arrivedAt, "one at a time, oldest slot first").toBe(true);
  }, 120_000);

  it("skip: a slot whose predecessor is still running is skipped (overlap), and its handler never runs", async () => {
    const { keys, ids } = await setup("skip");
    await waitUntil(settled(ids), 60_000, "three settled runs");
    expect(calls(keys).map((x) => x.length)).toEqual([1, 0, 0]);
    const rows = await Promise.all(ids.map((id) => readRun(t.pool, id)));
    expect(rows.map((r) => [r.state, r.skip_reason])).toEqual([
      ["done", null],
      ["skipped", "overlap"],
      ["skipped", "overlap"],
    ]);
  }, 120_000);
});
