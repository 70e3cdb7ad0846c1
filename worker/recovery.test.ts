import { performance } from "node:perf_hooks";
import { describe, expect, it } from "vitest";
import { runClockFrom, setClock } from "../lib/testing/clock";
import { setupTestDatabase } from "../lib/testing/db";
import { makeRuns, makeSchedule, RUNS_BY_HAND } from "../lib/testing/factories";
import { readAttempts, readRun, waitForRun } from "../lib/testing/runs";
import { spawnWorker, startWorkers } from "../lib/testing/spawn";
import { startAnswerCut } from "../lib/testing/answer-cut";
import { throughProxy } from "../lib/testing/blackhole";
import { startReceiver } from "../lib/testing/receiver";
import { waitUntil } from "../lib/testing/wait";

// Real processes, real PostgreSQL. Schedule time never moves by sleeping: the database clock
// runs from a fixed instant, or stands still and is moved; the tests wait on what the workers do.
const LEASE_SECONDS = 3;
const POLL_MS = 200;
const T0 = new Date("2030-01-01T10:00:00Z");
const t = setupTestDatabase();

const waitForRow = (id: number, pred: Parameters<typeof waitForRun>[2], timeoutMs?: number) => waitForRun(t.pool, id, pred, timeoutMs);

describe("a worker killed mid-handler", () => {
  it("kill -9: another worker takes the slot over as soon as its lease has run out on the database clock", async () => {
    // The database clock stands still, so the lease cannot run out while the test watches; then
    // it is moved just past the lease and the takeover is waited for. The stated takeover
    // bound ("lease + poll interval") is then a wait on a condition: on the database clock the takeover
    // needs nothing but the lease to run out (no partition lease, no second wait), and the real
    // time it takes is printed, not asserted (a busy machine makes it slower, not wrong).
    await setClock(t.pool, T0);
    const s = (await makeSchedule(t.db, { ...RUNS_BY_HAND, handler: "sleep", payload: { ms: 4000 }, leaseSeconds: LEASE_SECONDS })).id;
    // Two workers idle and polling; whichever claims the run is killed, the other must take over.
    const ws = await startWorkers(t.url, ["w-a", "w-b"], { SLOTKEEPER_POLL_INTERVAL_MS: String(POLL_MS) });
    const [id] = await makeRuns(t.db, s, [{ scheduledFor: T0 }]);
    const claimed = await waitForRow(id, (r) => r.state === "running", 20_000);
    const victim = ws.find((w) => w.id === claimed.lease_owner)!;
    const rescuer = ws.find((w) => w !== victim)!;
    victim.signal("SIGKILL");
    await victim.exited;
    const expiry = (await readRun(t.pool, id)).lease_expires_at!;
    expect(expiry).toEqual(new Date(T0.getTime() + LEASE_SECONDS * 1000));
    await setClock(t.pool, new Date(expiry.getTime() + 1));
    const movedAt = performance.now();
    await waitForRow(id, (r) => r.lease_owner === rescuer.id, 30_000);
    const takeoverMs = performance.now() - movedAt;
    const done = await waitForRow(id, (r) => r.state === "done", 30_000);
    console.log(JSON.stringify({ event: "test:kill9:recovery", takeoverMsAfterExpiry: Math.round(takeoverMs), leaseMs: LEASE_SECONDS * 1000, pollMs: POLL_MS }));
    expect(done.attempts).toBe(2);
    const attempts = await readAttempts(t.pool, id);
    expect(attempts.map((x) => [x.attempt, x.worker_id, x.outcome])).toEqual([
      [1, victim.id, "lease_expired"],
      [2, rescuer.id, "succeeded"],
    ]);
    // Taken over at the first instant the lease had run out: the clock never moved again.
    expect(attempts[1].started_at).toEqual(new Date(expiry.getTime() + 1));
  }, 120_000);

  it("SIGSTOP past the lease, SIGCONT: the zombie's finish is stale, its handler sees the abort, the ledger keeps one row", async () => {
    await runClockFrom(t.pool, T0);
    // The ledger's work (2 s) ignores the signal, like a slow call that cannot be cancelled: the
    // zombie writes after waking, with its old token, and the fence must reject it.
    const s = (await makeSchedule(t.db, { ...RUNS_BY_HAND, handler: "sql-ledger", payload: { delayMs: 2000, interruptible: false }, leaseSeconds: LEASE_SECONDS })).id;
    const a = spawnWorker(t.url, "zombie");
    await a.waitFor((l) => l.event === "worker:start", 60_000);
    const [id] = await makeRuns(t.db, s, [{ scheduledFor: T0 }]);
    // Stopped in the middle of its work: the handler has started (a worker that wakes past its
    // lease before starting one never starts it, as the test below shows).
    await a.waitFor((l) => l.event === "ledger:work:start" && l.runId === id, 20_000);
    a.signal("SIGSTOP");
    const b = spawnWorker(t.url, "successor");
    const done = await waitForRow(id, (r) => r.state === "done", 40_000);
    expect(done).toMatchObject({ attempts: 2 });
    a.signal("SIGCONT");
    const stale = await a.waitFor((l) => l.event === "run:finish:stale", 20_000);
    expect(stale).toMatchObject({ runId: id, attempt: 1 });
    await a.waitFor((l) => l.event === "run:abort:deadline" || l.event === "run:abort:lease_lost", 1);
    const rejected = await a.waitFor((l) => l.event === "ledger:write:rejected", 20_000);
    expect(rejected).toMatchObject({ fencingToken: 1, aborted: true });
    const { rows } = await t.pool.query("SELECT fencing_token, writes, worker_id FROM ledger");
    expect(rows).toEqual([{ fencing_token: 2, writes: 1, worker_id: "successor" }]);
    expect(await readRun(t.pool, id)).toMatchObject({ state: "done", attempts: 2 });
    const attempts = await readAttempts(t.pool, id);
    expect(attempts.map((x) => [x.attempt, x.worker_id, x.outcome])).toEqual([
      [1, "zombie", "lease_expired"],
      [2, "successor", "succeeded"],
    ]);
    await b.waitFor((l) => l.event === "run:attempt" && l.outcome === "succeeded", 1);
  }, 120_000);
});

describe("shutdown", () => {
  it("SIGTERM: stops claiming, aborts after the grace period and releases the run for another worker at once", async () => {
    await runClockFrom(t.pool, T0);
    const s = (await makeSchedule(t.db, { ...RUNS_BY_HAND, handler: "sleep", payload: { ms: 60_000 }, leaseSeconds: 60 })).id;
    const [a] = await startWorkers(t.url, ["leaver"], { SLOTKEEPER_SHUTDOWN_GRACE_MS: "500" });
    const [id] = await makeRuns(t.db, s, [{ scheduledFor: T0 }]);
    await waitForRow(id, (r) => r.state === "running", 20_000);
    a.signal("SIGTERM");
    expect(await a.exited).toBe(0);
    const row = await readRun(t.pool, id);
    expect(row).toMatchObject({ state: "pending", attempts: 1, lease_owner: null });
    expect((await readAttempts(t.pool, id)).map((x) => x.outcome)).toEqual(["aborted"]);
    expect(a.lines.some((l) => l.event === "run:attempt" && l.outcome === "aborted")).toBe(true);
  }, 120_000);
});

describe("losing the database", () => {
  it("keeps running when its connections are cut, and resumes work", async () => {
    await runClockFrom(t.pool, T0);
    const [w] = await startWorkers(t.url, ["survivor"]);
    const s = (await makeSchedule(t.db, { ...RUNS_BY_HAND, handler: "noop" })).id;
    const [before] = await makeRuns(t.db, s, [{ scheduledFor: T0 }]);
    await waitForRow(before, (r) => r.state === "done", 20_000);
    // Count the worker connections actually terminated: that, not an error log line (which needs
    // a query in flight at the instant of the cut), proves the cuts hit the worker.
    let terminated = 0;
    const cut = async () => {
      const r = await t.pool.query<{ n: number }>(
        "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'slotkeeper:worker%'",
      );
      terminated += r.rows[0].n;
    };
    for (let i = 0; i < 5; i++) {
      await cut();
      await new Promise((r) => setTimeout(r, 300));
    }
    expect(terminated).toBeGreaterThan(0);
    const [after] = await makeRuns(t.db, s, [{ scheduledFor: new Date(T0.getTime() + 1000) }]);
    await waitForRow(after, (r) => r.state === "done", 30_000).catch((err) => {
      throw new Error(`${err.message}; worker exit code ${w.proc.exitCode}; stderr: ${w.stderr().slice(-2000)}`);
    });
    expect(w.proc.exitCode).toBeNull();
  }, 120_000);
});

describe("a claim whose answer is lost", () => {
  it("the claim commits, the connection breaks before the answer arrives: the worker runs the run with that claim's token, not after its lease runs out", async () => {
    // The database clock stands still: a lease cannot run out, so only the worker finding out
    // what its lost claim took can start the run. One attempt, no lost lease, no second token.
    await setClock(t.pool, T0);
    const u = new URL(t.url);
    const proxy = await startAnswerCut({ host: u.hostname, port: Number(u.port || 5432) });
    try {
      const [w] = await startWorkers(throughProxy(t.url, proxy.port), ["unanswered"]);
      const name = `answer-lost-${Date.now()}`;
      const s = (await makeSchedule(t.db, { ...RUNS_BY_HAND, name, handler: "noop", leaseSeconds: LEASE_SECONDS })).id;
      proxy.arm(`["${name}"]`);
      const [id] = await makeRuns(t.db, s, [{ scheduledFor: T0 }]);
      const done = await waitForRow(id, (r) => r.state === "done", 30_000);
      expect(proxy.cuts).toBe(1);
      // The cut hit the claim, not some other statement naming the schedule.
      expect(w.lines.some((l) => l.event === "run:claim:error")).toBe(true);
      expect(done.attempts).toBe(1);
      expect(done.worker_id).toBe("unanswered");
      expect((await readAttempts(t.pool, id)).filter((a) => a.outcome !== "succeeded")).toEqual([]);
    } finally {
      await proxy.close();
    }
  }, 120_000);
});

describe("a worker paused between its claim and the answer", () => {
  it("SIGSTOP after the claim commits, before the worker reads it, until another worker took the run over: the zombie never starts the handler", async () => {
    // The proxy holds the claim's answer back after it committed, so the stop lands exactly between
    // the commit and the worker reading what it claimed. The database clock runs at real pace from
    // T0: the successor's takeover needs the lease to run out on it, which is the zombie's own
    // deadline (lease minus margin since it sent the claim) passed as well.
    await runClockFrom(t.pool, T0);
    const receiver = await startReceiver();
    const u = new URL(t.url);
    const proxy = await startAnswerCut({ host: u.hostname, port: Number(u.port || 5432) });
    try {
      // The test's handler ignores its signal, as a handler may: only not starting it keeps it from acting.
      const env = { SK_TEST_HANDLERS: "probe", SK_TEST_RECEIVER: receiver.url };
      const script = { script: "lib/testing/handler-worker.ts" };
      const [zombie] = await startWorkers(throughProxy(t.url, proxy.port), ["paused-claim"], env, script);
      const name = `paused-claim-${Date.now()}`;
      const s = (await makeSchedule(t.db, { ...RUNS_BY_HAND, name, handler: "probe", leaseSeconds: LEASE_SECONDS })).id;
      proxy.hold(`["${name}"]`);
      const [id] = await makeRuns(t.db, s, [{ scheduledFor: T0 }]);
      await waitUntil(() => proxy.holding, 20_000, "the claim's answer held after its commit", 10);
      expect(await readRun(t.pool, id)).toMatchObject({ state: "running", attempts: 1, lease_owner: "paused-claim" });
      zombie.signal("SIGSTOP");
      proxy.release();
      const successor = spawnWorker(t.url, "successor", env, script);
      const done = await waitForRow(id, (r) => r.state === "done", 60_000);
      expect(done).toMatchObject({ attempts: 2, worker_id: "successor" });
      zombie.signal("SIGCONT");
      // The zombie reads its claim, finds the deadline already passed, and gives the attempt up unrun.
      const given = await zombie.waitFor((l) => l.event === "run:abort:deadline" && l.runId === id, 20_000);
      expect(given).toMatchObject({ attempt: 1 });
      await zombie.waitFor((l) => l.event === "run:finish:stale" && l.runId === id, 20_000);
      // The receiver, outside the product: one call, the successor's.
      expect(receiver.received.map((r) => r.body)).toEqual([{ handler: "probe", workerId: "successor", runId: id, attempt: 2 }]);
      expect((await readAttempts(t.pool, id)).map((x) => [x.attempt, x.worker_id, x.outcome])).toEqual([
        [1, "paused-claim", "lease_expired"],
        [2, "successor", "succeeded"],
      ]);
      await successor.waitFor((l) => l.event === "run:attempt" && l.outcome === "succeeded", 1);
    } finally {
      await proxy.close();
      await receiver.close();
    }
  }, 120_000);
});
