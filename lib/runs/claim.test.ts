import { describe, expect, it } from "vitest";
import { createDb, createPool } from "../db/client";
import { preparedStatements } from "../db/prepared";
import { advanceClock } from "../testing/clock";
import { setupTestDatabase } from "../testing/db";
import { makeRuns, makeSchedule, slots } from "../testing/factories";
import { readAttempts, readRun } from "../testing/runs";
import { claimRuns, claimRunsDetailed } from "./claim";
import { finishRuns } from "./finish";
import { heartbeatRuns } from "./lease";
import { runNow } from "../schedules/mutations";
import { idempotencyKey } from "./idempotency";
import { defineHandler } from "../handlers/types";
import { createLogger } from "../log";
import { runAttempt } from "../../worker/attempt";
import { AttemptAbort } from "../../worker/attempt-abort";
import { builtinHandlers, createHandlerRegistry } from "../../worker/handlers/registry";
import { createRunner } from "../../worker/runner";
import { waitUntil } from "../testing/wait";

const T0 = new Date("2030-01-01T10:00:00Z");
const t = setupTestDatabase({ clock: T0 });

describe("claimRuns", () => {
  it("claims due pending runs only, sets the lease from the schedule and bumps the token", async () => {
    const s = (await makeSchedule(t.db, { leaseSeconds: 30 })).id;
    const [due, later] = await makeRuns(t.db, s, [{ scheduledFor: T0 }, { scheduledFor: new Date(T0.getTime() + 1000) }]);
    const claimed = await claimRuns(t.db, { workerId: "w1", partitions: null, limit: 10 });
    expect(claimed.map((c) => c.id)).toEqual([due]);
    expect(claimed[0]).toMatchObject({ attempt: 1, leaseSeconds: 30, handler: "noop", scheduleId: s, scheduledFor: T0 });
    const row = await readRun(t.pool, due);
    expect(row).toMatchObject({ state: "running", attempts: 1, lease_owner: "w1" });
    expect(row.lease_expires_at!.getTime()).toBe(T0.getTime() + 30_000);
    expect((await readRun(t.pool, later)).state).toBe("pending");
  });

  it("respects the limit and the partitions it is given", async () => {
    const s0 = (await makeSchedule(t.db, { partition: 0 })).id;
    const s1 = (await makeSchedule(t.db, { partition: 1 })).id;
    await makeRuns(t.db, s0, slots(T0.getTime() - 60_000 * 5, 5).map((d) => ({ scheduledFor: d })));
    await makeRuns(t.db, s1, slots(T0.getTime() - 60_000 * 5, 5).map((d) => ({ scheduledFor: d })));
    expect(await claimRuns(t.db, { workerId: "w1", partitions: [1], limit: 3 })).toHaveLength(3);
    const rest = await claimRuns(t.db, { workerId: "w1", partitions: [1], limit: 10 });
    expect(rest.every((r) => r.scheduleId === s1)).toBe(true);
    expect(rest).toHaveLength(2);
    expect(await claimRuns(t.db, { workerId: "w1", partitions: null, limit: 0 })).toEqual([]);
  });

  it("reclaims a run whose lease expired, recording the lost attempt, and fences the old holder", async () => {
    const s = (await makeSchedule(t.db, { leaseSeconds: 10 })).id;
    const [id] = await makeRuns(t.db, s, [{ scheduledFor: T0 }]);
    await claimRuns(t.db, { workerId: "w1", partitions: null, limit: 1 });
    await advanceClock(t.pool, 9_000);
    expect(await claimRuns(t.db, { workerId: "w2", partitions: null, limit: 1 })).toEqual([]);
    await advanceClock(t.pool, 2_000);
    const [again] = await claimRuns(t.db, { workerId: "w2", partitions: null, limit: 1 });
    expect(again).toMatchObject({ id, attempt: 2 });
    const [lost] = await readAttempts(t.pool, id);
    expect(lost).toMatchObject({ attempt: 1, worker_id: "w1", outcome: "lease_expired" });
    expect((await heartbeatRuns(t.db, "w1", [{ id, attempt: 1 }])).has(id)).toBe(false);
    expect((await heartbeatRuns(t.db, "w2", [{ id, attempt: 2 }])).has(id)).toBe(true);
  });

  it("an expired lease is lost before anyone takes the run over: its renewal and its fenced ledger write are refused", async () => {
    const s = (await makeSchedule(t.db, { handler: "sql-ledger", leaseSeconds: 4 })).id;
    const earlier = new Date(T0.getTime() - 1000);
    const [, id] = await makeRuns(t.db, s, [{ scheduledFor: earlier }, { scheduledFor: T0 }]);
    const claimed = await claimRuns(t.db, { workerId: "w1", partitions: null, limit: 2 });
    expect(claimed).toHaveLength(2);
    const frozen = claimed.find((c) => c.id === id)!;
    const live = claimed.find((c) => c.id !== id)!;
    const registry = createHandlerRegistry(builtinHandlers(t.db));
    const deps = { registry, workerId: "w1", log: createLogger("test", "silent") };
    // While the lease holds, the attempt writes (the other run stands for a healthy one).
    expect(await runAttempt(live, deps, new AttemptAbort())).toMatchObject({ outcome: "succeeded" });
    // The worker was frozen past its lease; nobody has claimed the run since.
    await advanceClock(t.pool, 5_000);
    expect((await heartbeatRuns(t.db, "w1", [{ id, attempt: 1 }])).has(id)).toBe(false);
    expect((await readRun(t.pool, id)).lease_owner).toBe("w1");
    const late = await runAttempt(frozen, deps, new AttemptAbort());
    expect(late).toMatchObject({ outcome: "failed", error: expect.stringMatching(/no longer holds/) });
    // Only the attempt lost the run: the failure is retryable, so a lost lease never makes a dead run.
    expect(late).not.toMatchObject({ nonRetryable: true });
    const ledger = await t.pool.query("SELECT scheduled_for, fencing_token FROM ledger ORDER BY scheduled_for");
    expect(ledger.rows).toEqual([{ scheduled_for: earlier, fencing_token: 1 }]);
    // A manual run (its slot is the instant of the request, with microseconds) writes while held.
    await t.pool.query("UPDATE sk_clock SET frozen_at = frozen_at + interval '0.123456 seconds'");
    const manual = await runNow(t.db, (await t.pool.query("SELECT name FROM schedules WHERE id = $1", [s])).rows[0].name, { kind: "system", name: "test", role: "admin" });
    const [held] = (await claimRuns(t.db, { workerId: "w1", partitions: null, limit: 10 })).filter((c) => c.id === manual.id);
    expect(await runAttempt(held, deps, new AttemptAbort())).toMatchObject({ outcome: "succeeded" });
  });

  it("a fenced ledger write holds the run until it commits: the run cannot leave the attempt between the fence's check and the write", async () => {
    const s = (await makeSchedule(t.db, { handler: "sql-ledger", leaseSeconds: 30 })).id;
    const [id] = await makeRuns(t.db, s, [{ scheduledFor: T0 }]);
    const [claimed] = await claimRuns(t.db, { workerId: "w1", partitions: null, limit: 1 });
    const key = idempotencyKey(claimed.scheduleId, claimed.scheduledFor, claimed.origin, claimed.id);
    const registry = createHandlerRegistry(builtinHandlers(t.db));
    const deps = { registry, workerId: "w1", log: createLogger("test", "silent") };
    // Another transaction holds the ledger key, so the write stops after its fence has passed.
    const blocker = await t.pool.connect();
    const other = await t.pool.connect();
    try {
      await blocker.query("BEGIN");
      await blocker.query(
        "INSERT INTO ledger (idempotency_key, schedule_id, scheduled_for, fencing_token, worker_id, created_at) VALUES ($1, $2, $3, 0, 'blocker', sk_now())",
        [key, s, T0],
      );
      const write = runAttempt(claimed, deps, new AttemptAbort());
      const waiting = async (like: string) =>
        (await t.pool.query("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1", [like])).rowCount === 1;
      await waitUntil(() => waiting("%INSERT INTO ledger%"), 10_000, "the ledger write to wait on the key");
      // The run now leaves the attempt (as a takeover does): it must wait for the write.
      let moved = false;
      const takeover = other.query("UPDATE run_queue SET attempts = attempts + 1, lease_owner = 'w2' WHERE run_id = $1", [id]).then(() => (moved = true));
      await waitUntil(async () => moved || (await waiting("UPDATE run_queue SET attempts%")), 10_000, "the takeover to finish or wait");
      expect(moved, "the run left the attempt while its fenced write was in flight").toBe(false);
      await blocker.query("ROLLBACK");
      expect(await write).toMatchObject({ outcome: "succeeded" });
      await takeover;
      const ledger = await t.pool.query("SELECT fencing_token, worker_id FROM ledger WHERE idempotency_key = $1", [key]);
      expect(ledger.rows).toEqual([{ fencing_token: 1, worker_id: "w1" }]);
    } finally {
      await blocker.query("ROLLBACK").catch(() => undefined);
      blocker.release();
      other.release();
    }
  });

  it("rescues an expired lease in any partition, but claims pending runs only in its own", async () => {
    const s = (await makeSchedule(t.db, { leaseSeconds: 5, partition: 3 })).id;
    const [id, other] = await makeRuns(t.db, s, [{ scheduledFor: T0 }, { scheduledFor: new Date(T0.getTime() - 1000) }]);
    await claimRuns(t.db, { workerId: "w1", partitions: [3], limit: 1 });
    await advanceClock(t.pool, 6_000);
    // A worker holding no partition at all (its partition leases not granted yet) still rescues.
    const rescued = await claimRuns(t.db, { workerId: "w2", partitions: [], limit: 10 });
    expect(rescued.map((r) => r.id)).toHaveLength(1);
    expect([id, other]).toContain(rescued[0].id);
    expect(rescued[0].attempt).toBe(2);
  });

  it("leaves expired leases alone when told not to look (a claim right after another), and takes them on the next look", async () => {
    const s = (await makeSchedule(t.db, { leaseSeconds: 5, partition: 2 })).id;
    const [expiring] = await makeRuns(t.db, s, [{ scheduledFor: new Date(T0.getTime() - 60_000) }]);
    await claimRuns(t.db, { workerId: "w1", partitions: [2], limit: 1 });
    const [pending] = await makeRuns(t.db, s, [{ scheduledFor: T0 }]);
    await advanceClock(t.pool, 6_000);
    const quick = await claimRuns(t.db, { workerId: "w2", partitions: [2], limit: 10, rescueExpired: false });
    expect(quick.map((r) => r.id)).toEqual([pending]);
    expect(await claimRuns(t.db, { workerId: "w2", partitions: [], limit: 10, rescueExpired: false })).toEqual([]);
    expect((await readRun(t.pool, expiring)).lease_owner).toBe("w1");
    const rescued = await claimRuns(t.db, { workerId: "w2", partitions: [2], limit: 10 });
    expect(rescued.map((r) => [r.id, r.attempt])).toEqual([[expiring, 2]]);
  });

  it("sends a run dead when its final attempt's lease expires", async () => {
    const s = (await makeSchedule(t.db, { leaseSeconds: 5, retryMaxAttempts: 1 })).id;
    const [id] = await makeRuns(t.db, s, [{ scheduledFor: T0 }]);
    await claimRuns(t.db, { workerId: "w1", partitions: null, limit: 1 });
    await advanceClock(t.pool, 6_000);
    const { claimed, settled } = await claimRunsDetailed(t.db, { workerId: "w2", partitions: null, limit: 1 });
    expect(claimed).toEqual([]);
    expect(settled).toEqual([{ id, state: "dead" }]);
    expect(await readRun(t.pool, id)).toMatchObject({ state: "dead", attempts: 1, last_error: "lease expired on final attempt" });
    expect((await readAttempts(t.pool, id)).map((a) => a.outcome)).toEqual(["lease_expired"]);
  });

  it("never hands one run to two concurrent claimers: the per-handler statement workers run, SKIP LOCKED on real connections", async () => {
    // Four schedules in four partitions, 150 due runs each; four workers' runners (worker/runner.ts,
    // so the claim is the one a worker makes: by partition, naming its handlers, per queue) that all
    // hold all four partitions (the worst overlap a rebalance can leave), each on a connection of
    // its own. The handler records which worker ran which run and holds it, so every run stays
    // running under the lease it was handed.
    const PARTITIONS = [0, 1, 2, 3];
    for (const partition of PARTITIONS) {
      const s = (await makeSchedule(t.db, { partition, handler: "witness" })).id;
      await makeRuns(t.db, s, slots(T0.getTime() - 150 * 60_000, 150).map((d) => ({ scheduledFor: d })));
    }
    const ran: { runId: number; workerId: string }[] = [];
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const registry = createHandlerRegistry([
      defineHandler({
        name: "witness",
        idempotent: true,
        description: "records its run and holds it until the test lets go",
        run: async (ctx) => {
          ran.push({ runId: ctx.runId, workerId: ctx.workerId });
          await released;
        },
      }),
    ]);
    const pools = Array.from({ length: 4 }, () => createPool(t.url, { max: 1 }));
    const runners = pools.map((p, i) =>
      createRunner({ db: createDb(p), log: createLogger("test", "silent"), workerId: `w${i}`, registry, concurrency: 600, claimBatchSize: 25, leaseSafetyMarginMs: 500, partitions: () => PARTITIONS }),
    );
    try {
      await Promise.all(
        runners.map(async (r) => {
          for (;;) {
            const before = r.inFlight;
            await r.claimPass();
            if (r.inFlight === before) return;
          }
        }),
      );
      // The handlers' own record: every run ran once, on one worker.
      await waitUntil(() => ran.length >= 600, 10_000, "every claimed run's handler to start");
      expect(ran).toHaveLength(600);
      expect(new Set(ran.map((r) => r.runId)).size).toBe(600);
      // Each run is held by the worker whose handler ran it, at the first token: read from the queue.
      const { rows } = await t.pool.query<{ run_id: number; lease_owner: string; attempts: number }>("SELECT run_id::int, lease_owner, attempts FROM run_queue WHERE state = 'running'");
      expect(rows).toHaveLength(600);
      const owner = new Map(rows.map((r) => [r.run_id, r]));
      for (const r of ran) expect(owner.get(r.runId)).toMatchObject({ lease_owner: r.workerId, attempts: 1 });
      // What each worker ran is the per-handler claim (sk_claim_handlers), never the claim without
      // handlers (sk_claim), read from the server's own list of each connection's statements. A
      // change to what workers claim with fails here, and the SKIP LOCKED above moves with it.
      const byHandler = preparedStatements.filter((st) => /^sk_claim_handlers_[0-9a-f]{16}$/.test(st.name));
      const plain = preparedStatements.filter((st) => /^sk_claim_[0-9a-f]{16}$/.test(st.name));
      expect(byHandler).toHaveLength(1);
      expect(plain.length).toBeGreaterThan(0);
      for (const p of pools) {
        const names = (await p.query<{ name: string }>("SELECT name FROM pg_prepared_statements")).rows.map((r) => r.name);
        expect(names).toContain(byHandler[0].name);
        for (const st of plain) expect(names).not.toContain(st.name);
      }
    } finally {
      release();
      await Promise.all(runners.map(async (r) => (await r.drain(10_000)) && r.flush()));
      await Promise.all(pools.map((p) => p.end()));
    }
  });
});

describe("overlap in the claim", () => {
  it("forbid: a later slot waits while an earlier run is running or waiting on retry", async () => {
    const s = (await makeSchedule(t.db, { overlap: "forbid" })).id;
    const [a, b] = await makeRuns(t.db, s, [{ scheduledFor: new Date(T0.getTime() - 2000) }, { scheduledFor: T0 }]);
    const [first] = await claimRuns(t.db, { workerId: "w", partitions: null, limit: 10 });
    expect(first.id).toBe(a);
    expect(await claimRuns(t.db, { workerId: "w", partitions: null, limit: 10 })).toEqual([]);
    // a fails and waits on backoff: still unfinished, b still waits.
    await finishRuns(t.db, "w", [{ id: a, attempt: first.attempt, outcome: "failed", error: "boom", retryDelaySeconds: 60 }]);
    expect(await claimRuns(t.db, { workerId: "w", partitions: null, limit: 10 })).toEqual([]);
    await advanceClock(t.pool, 61_000);
    const [retry] = await claimRuns(t.db, { workerId: "w", partitions: null, limit: 10 });
    expect([retry.id, retry.attempt]).toEqual([a, 2]);
    await finishRuns(t.db, "w", [{ id: a, attempt: retry.attempt, outcome: "succeeded" }]);
    expect((await claimRuns(t.db, { workerId: "w", partitions: null, limit: 10 })).map((r) => r.id)).toEqual([b]);
  });

  it("skip: a slot whose predecessor is running or retrying is skipped with reason overlap", async () => {
    const s = (await makeSchedule(t.db, { overlap: "skip" })).id;
    const [a, b, c] = await makeRuns(t.db, s, [0, 1, 2].map((i) => ({ scheduledFor: new Date(T0.getTime() - (3 - i) * 1000) })));
    // Same batch: only the earliest starts; the others wait for it to start, then are skipped.
    expect((await claimRuns(t.db, { workerId: "w", partitions: null, limit: 10 })).map((r) => r.id)).toEqual([a]);
    const { claimed, settled } = await claimRunsDetailed(t.db, { workerId: "w", partitions: null, limit: 10 });
    expect(claimed).toEqual([]);
    expect(settled.map((x) => x.state)).toEqual(["skipped", "skipped"]);
    expect(await readRun(t.pool, b)).toMatchObject({ state: "skipped", skip_reason: "overlap", attempts: 0 });
    expect((await readRun(t.pool, c)).skip_reason).toBe("overlap");
  });

  it("allow: every due slot of a schedule is claimed at once", async () => {
    const s = (await makeSchedule(t.db, { overlap: "allow" })).id;
    await makeRuns(t.db, s, [0, 1, 2].map((i) => ({ scheduledFor: new Date(T0.getTime() - i * 1000) })));
    expect(await claimRuns(t.db, { workerId: "w", partitions: null, limit: 10 })).toHaveLength(3);
  });

  it("hands each run of a mixed batch its own schedule's name, handler, payload, lease and retry policy", async () => {
    const specs = [
      { name: "alpha one", handler: "noop", payload: { to: "a" }, leaseSeconds: 30, retryMaxAttempts: 2 },
      { name: "beta;two 'quoted' \"x\"", handler: "noop", payload: { to: "a" }, leaseSeconds: 30, retryMaxAttempts: 2 },
      { name: "gamma", handler: "http", payload: { url: "http://x/;a b", n: [1, 2] }, leaseSeconds: 45, retryMaxAttempts: 4 },
      { name: "delta", handler: "noop", payload: {}, leaseSeconds: 30, retryMaxAttempts: 2 },
    ];
    const ids = new Map<number, (typeof specs)[number]>();
    for (const spec of specs) {
      const s = (await makeSchedule(t.db, spec)).id;
      for (const run of await makeRuns(t.db, s, [0, 1].map((i) => ({ scheduledFor: new Date(T0.getTime() - i * 1000) })))) ids.set(run, spec);
    }
    const claimed = await claimRuns(t.db, { workerId: "w", partitions: null, limit: 100 });
    expect(claimed).toHaveLength(8);
    for (const c of claimed) {
      const spec = ids.get(c.id)!;
      expect(c).toMatchObject({ scheduleName: spec.name, handler: spec.handler, payload: spec.payload, leaseSeconds: spec.leaseSeconds, attempt: 1 });
      expect(c.retry.maxAttempts).toBe(spec.retryMaxAttempts);
      expect(c.queueTid).toMatch(/^\(\d+,\d+\)$/);
    }
    // Runs that share settings share nothing a handler could change.
    const [a, b] = claimed.filter((c) => ids.get(c.id)!.name === "alpha one");
    expect(a.payload).not.toBe(b.payload);
  });

  it("a claimed payload that may name an environment variable is resolved before the handler runs; others when the handler reads them", async () => {
    const withRef = (await makeSchedule(t.db, { name: "with-ref", payload: { token: { $env: "SK_TEST_CLAIM_UNSET" } } })).id;
    const plain = (await makeSchedule(t.db, { name: "plain", payload: { to: ["x", { n: 1 }] } })).id;
    await makeRuns(t.db, withRef, [{ scheduledFor: T0 }]);
    await makeRuns(t.db, plain, [{ scheduledFor: T0 }]);
    const claimed = await claimRuns(t.db, { workerId: "w", partitions: null, limit: 10 });
    const byName = new Map(claimed.map((c) => [c.scheduleName, c]));
    expect(byName.get("with-ref")!.payloadRefersToEnv).toBe(true);
    expect(byName.get("plain")!.payloadRefersToEnv).toBe(false);
    const seen: unknown[] = [];
    const registry = createHandlerRegistry([defineHandler({ name: "noop", idempotent: true, description: "", run: (ctx) => void seen.push(ctx.payload) })]);
    const deps = { registry, workerId: "w", log: createLogger("test", "silent") };
    // The handler never reads this payload, and the attempt still fails on the unset variable.
    const ignoring = createHandlerRegistry([defineHandler({ name: "noop", idempotent: true, description: "", run: () => undefined })]);
    const failed = await runAttempt(byName.get("with-ref")!, { ...deps, registry: ignoring }, new AttemptAbort());
    expect(failed).toMatchObject({ outcome: "failed", error: expect.stringMatching(/SK_TEST_CLAIM_UNSET/) });
    expect(await runAttempt(byName.get("plain")!, deps, new AttemptAbort())).toMatchObject({ outcome: "succeeded" });
    expect(seen).toEqual([{ to: ["x", { n: 1 }] }]);
  });

  it("claims inside a Drizzle transaction on the transaction's connection", async () => {
    const s = (await makeSchedule(t.db)).id;
    const [run] = await makeRuns(t.db, s, [{ scheduledFor: T0 }]);
    const claimed = await t.db.transaction(async (tx) => {
      const got = await claimRuns(tx as unknown as typeof t.db, { workerId: "w", partitions: [0], limit: 10 });
      // Not yet visible outside the transaction.
      expect((await readRun(t.pool, run)).state).toBe("pending");
      return got;
    });
    expect(claimed.map((c) => c.id)).toEqual([run]);
    expect((await readRun(t.pool, run)).state).toBe("running");
  });

  it("looks for expired leases once per interval for the whole cluster when gated, and again once the interval has passed", async () => {
    const s = (await makeSchedule(t.db, { leaseSeconds: 30 })).id;
    const runs = await makeRuns(t.db, s, [0, 1].map((i) => ({ scheduledFor: new Date(T0.getTime() - i * 1000) })));
    await claimRuns(t.db, { workerId: "dead", partitions: null, limit: 10 });
    await advanceClock(t.pool, 31_000);
    const gate = { partitions: [], rescueGateMs: 1000 } as const;
    const first = await claimRunsDetailed(t.db, { workerId: "a", limit: 1, ...gate, partitions: [] });
    expect(first.claimed).toHaveLength(1);
    // Another worker, within the interval: the look is someone else's this time.
    expect((await claimRunsDetailed(t.db, { workerId: "b", limit: 10, ...gate, partitions: [] })).claimed).toHaveLength(0);
    // Ungated (tests, tools) it always looks.
    await advanceClock(t.pool, 500);
    const ungated = await claimRunsDetailed(t.db, { workerId: "c", limit: 10, partitions: [] });
    expect(ungated.claimed.map((r) => r.id)).toEqual(runs.filter((id) => id !== first.claimed[0].id));
    // And past the interval the gate opens again (nothing left to take, but it looked: the stamp moved).
    await advanceClock(t.pool, 1000);
    await claimRunsDetailed(t.db, { workerId: "b", limit: 10, ...gate, partitions: [] });
    const { rows } = await t.pool.query<{ stamped: boolean }>("SELECT rescued_at = sk_now() AS stamped FROM cluster");
    expect(rows[0].stamped).toBe(true);
  });
});

describe("routing: a claim takes only the handlers its worker serves", () => {
  const handlerOf = async (id: number) => (await t.pool.query<{ handler: string }>("SELECT handler FROM run_queue WHERE run_id = $1", [id])).rows[0]?.handler;

  it("leaves other handlers' runs pending with no attempt used, in the plain and the exclusive claim", async () => {
    const a = (await makeSchedule(t.db, { handler: "alpha" })).id;
    const b = (await makeSchedule(t.db, { handler: "beta" })).id;
    const bx = (await makeSchedule(t.db, { handler: "beta", overlap: "forbid" })).id;
    const [ra] = await makeRuns(t.db, a, [{ scheduledFor: T0 }]);
    const [rb] = await makeRuns(t.db, b, [{ scheduledFor: T0 }]);
    const [rbx] = await makeRuns(t.db, bx, [{ scheduledFor: T0 }]);
    expect([await handlerOf(ra), await handlerOf(rb), await handlerOf(rbx)]).toEqual(["alpha", "beta", "beta"]);
    const got = await claimRuns(t.db, { workerId: "wa", partitions: [0], limit: 10, handlers: ["alpha", "noop"] });
    expect(got.map((r) => [r.id, r.handler])).toEqual([[ra, "alpha"]]);
    for (const id of [rb, rbx]) expect(await readRun(t.pool, id)).toMatchObject({ state: "pending", attempts: 0 });
    const other = await claimRuns(t.db, { workerId: "wb", partitions: [0], limit: 10, handlers: ["beta"] });
    expect(other.map((r) => r.id).sort()).toEqual([rb, rbx].sort());
  });

  it("follows an edit of the schedule's handler to its queued runs", async () => {
    const s = (await makeSchedule(t.db, { handler: "alpha" })).id;
    const [id] = await makeRuns(t.db, s, [{ scheduledFor: T0 }]);
    await t.pool.query("UPDATE schedules SET handler = 'beta' WHERE id = $1", [s]);
    expect(await handlerOf(id)).toBe("beta");
    expect(await claimRuns(t.db, { workerId: "wa", partitions: null, limit: 10, handlers: ["alpha"] })).toEqual([]);
    expect((await claimRuns(t.db, { workerId: "wb", partitions: null, limit: 10, handlers: ["beta"] })).map((r) => r.id)).toEqual([id]);
  });

  it("rescues only runs it serves, but sends a final attempt dead whoever finds it", async () => {
    const s = (await makeSchedule(t.db, { handler: "beta", leaseSeconds: 5, retryMaxAttempts: 2 })).id;
    const [id] = await makeRuns(t.db, s, [{ scheduledFor: T0 }]);
    await claimRuns(t.db, { workerId: "wb1", partitions: null, limit: 1, handlers: ["beta"] });
    await advanceClock(t.pool, 6_000);
    expect(await claimRuns(t.db, { workerId: "wa", partitions: [], limit: 10, handlers: ["alpha"] })).toEqual([]);
    expect(await readRun(t.pool, id)).toMatchObject({ state: "running", attempts: 1, lease_owner: "wb1" });
    const [again] = await claimRuns(t.db, { workerId: "wb2", partitions: [], limit: 10, handlers: ["beta"] });
    expect(again).toMatchObject({ id, attempt: 2 });
    await advanceClock(t.pool, 6_000);
    const { settled } = await claimRunsDetailed(t.db, { workerId: "wa", partitions: [], limit: 10, handlers: ["alpha"] });
    expect(settled).toEqual([expect.objectContaining({ id, state: "dead" })]);
  });
});
