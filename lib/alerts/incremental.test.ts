import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, createPool, type Db } from "../db/client";
import { getScheduleHealth } from "../health/schedule-health";
import { finishRuns } from "../runs/finish";
import { setClock } from "../testing/clock";
import { setupTestDatabase } from "../testing/db";
import { ALERT_PASS_OPTIONS, healthyInBulk, measuredPass } from "../testing/alert-passes";
import { makeRun, makeRuns, makeSchedule, RUNS_BY_HAND } from "../testing/factories";
import { registerWorker } from "../workers/registry";
import { evaluateAlerts, type EvaluateOptions } from "./evaluate";
import { verdictsFor } from "./rules";

// The alert pass reads what changed or came due, not the fleet (lib/alerts/watch.ts). The oracles
// here are outside the pass: the table statistics PostgreSQL keeps of the tuples each table gave
// out, the event history, and the full-scan verdicts of every schedule (what a pass used to read).
const t = setupTestDatabase({ poolSize: 3 });
const opts = ALERT_PASS_OPTIONS;
const T0 = Date.parse("2030-01-01T10:00:00Z");
const at = (seconds: number) => new Date(T0 + seconds * 1000);

async function events() {
  const { rows } = await t.pool.query<{ schedule_id: number; rule: string; kind: string }>("SELECT schedule_id::int, rule, kind FROM alert_events ORDER BY id");
  return rows;
}

describe("an alert pass costs what changed", () => {
  it("with 20,000 schedules: the first pass reads them all, a pass with nothing changed reads none, a pass after 50 finishes reads those 50", async () => {
    await setClock(t.pool, at(0));
    await healthyInBulk(t.pool, "bulk-", 20_000);
    await t.pool.query("ANALYZE schedules, runs, run_queue, alert_watch");

    const first = await measuredPass(t.url, t.pool);
    expect(first.checked).toBe(20_000);
    expect(first.reads.schedules).toBeGreaterThanOrEqual(20_000);
    // The counts by status the pass keeps: every schedule judged healthy, under its handler.
    const counts = () => t.pool.query("SELECT status::text, handler, n::int, xmin::text FROM schedule_counts WHERE n > 0 ORDER BY 1, 2");
    const counted = (await counts()).rows;
    expect(counted.map(({ status, handler, n }) => ({ status, handler, n }))).toEqual([{ status: "healthy", handler: "noop", n: 20_000 }]);

    await setClock(t.pool, at(60));
    const idle = await measuredPass(t.url, t.pool);
    expect(idle.checked).toBe(0);
    // Of the watch list, only its earliest instant: none has come, so nothing more is read.
    expect(idle.reads).toEqual({ schedules: 0, runs: 0, run_queue: 0, alert_watch: expect.any(Number), alert_watch_check_idx: expect.any(Number) });
    expect(idle.reads.alert_watch).toBeLessThanOrEqual(1);
    // ...and leaves the counts as they were, not even rewritten (the same row versions).
    expect((await counts()).rows).toEqual(counted);

    // 50 runs succeed (the real finish statement): the next pass reads those 50 schedules, a few
    // tuples each, and nothing of the other 19,950.
    const { rows: picked } = await t.pool.query<{ id: number }>("SELECT id::int FROM schedules ORDER BY id LIMIT 50");
    for (const s of picked) await makeRun(t.db, { scheduleId: s.id, state: "running", scheduledFor: at(60), startedAt: at(60), leaseOwner: "w1" });
    await setClock(t.pool, at(61));
    const { rows: running } = await t.pool.query<{ run_id: number; schedule_id: number }>("SELECT run_id::int, schedule_id::int FROM run_queue WHERE state = 'running'");
    await finishRuns(t.db, "w1", running.map((r) => ({ id: r.run_id, scheduleId: r.schedule_id, attempt: 1, outcome: "succeeded" as const, durationMs: 1000 })));
    const busy = await measuredPass(t.url, t.pool);
    expect(busy.checked).toBe(50);
    expect(busy.reads.schedules).toBeLessThan(50 * 10);
    expect(busy.reads.run_queue).toBeLessThan(50 * 10);
    expect(busy.reads.runs).toBeLessThan(50 * 60);
    expect(busy.reads.alert_watch).toBeLessThan(50 * 10);
    expect(await events()).toEqual([]);
  }, 120_000);
});

describe("a fleet with alerts firing", () => {
  it("with 20,000 schedules late or failing: a pass with nothing changed reads none, the reminder interval brings each back once, a success resolves those it names", async () => {
    await setClock(t.pool, at(0));
    // 20,000 schedules every 300 s (late after 630 s), none ever succeeded; every tenth with a dead run.
    await t.pool.query(`
      INSERT INTO schedules (name, handler, every_seconds, timezone, enabled, next_slot_at, partition, created_at, updated_at, catch_up)
      SELECT 'firing-' || g, 'noop', 300, 'UTC', true, sk_now() + interval '1 day', 0, sk_now(), sk_now(), 'all'
      FROM generate_series(1, 20000) g`);
    await t.pool.query(`
      INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, attempts, max_attempts, started_at, finished_at, duration_ms)
      SELECT s.id, 0, sk_now(), sk_now(), sk_now(), 'dead', 3, 3, sk_now(), sk_now(), 100 FROM schedules s WHERE s.id % 10 = 0`);
    await t.pool.query("ANALYZE schedules, runs, run_queue, alert_watch");
    const reminderEvery = 3600;
    const kinds = async () =>
      Object.fromEntries((await t.pool.query<{ k: string; n: number }>("SELECT rule || ':' || kind AS k, count(*)::int AS n FROM alert_events GROUP BY 1")).rows.map((r) => [r.k, r.n]));

    expect((await measuredPass(t.url, t.pool)).checked).toBe(20_000);
    await setClock(t.pool, at(700));
    expect((await measuredPass(t.url, t.pool)).checked).toBe(20_000); // all late now, by time alone
    expect(await kinds()).toEqual({ "failing:firing": 2_000, "late:firing": 20_000 });

    // Firing, nothing written: no pass reads any of them until a reminder is due.
    for (const s of [701, 1000, reminderEvery - 1]) {
      await setClock(t.pool, at(s));
      const idle = await measuredPass(t.url, t.pool);
      expect(idle.checked, `at ${s} s`).toBe(0);
      // Of the watch list, only its earliest instant: none has come, so nothing more is read.
      expect(idle.reads).toEqual({ schedules: 0, runs: 0, run_queue: 0, alert_watch: expect.any(Number), alert_watch_check_idx: expect.any(Number) });
      expect(idle.reads.alert_watch).toBeLessThanOrEqual(1);
    }
    // The failing ones first notified at 0 s are reminded at 3,600 s, the rest at 4,300 s: each once.
    await setClock(t.pool, at(reminderEvery));
    expect((await measuredPass(t.url, t.pool)).checked).toBe(2_000);
    expect(await kinds()).toMatchObject({ "failing:reminder": 2_000 });
    expect((await kinds())["late:reminder"]).toBeUndefined();
    await setClock(t.pool, at(699 + reminderEvery));
    expect((await measuredPass(t.url, t.pool)).checked).toBe(0);
    await setClock(t.pool, at(700 + reminderEvery));
    expect((await measuredPass(t.url, t.pool)).checked).toBe(20_000);
    expect(await kinds()).toEqual({ "failing:firing": 2_000, "late:firing": 20_000, "failing:reminder": 2_000, "late:reminder": 20_000 });
    await setClock(t.pool, at(701 + reminderEvery));
    expect((await measuredPass(t.url, t.pool)).checked).toBe(0);

    // 50 of them succeed (written, so logged): the next pass reads those 50 and resolves their late.
    const { rows: picked } = await t.pool.query<{ id: number }>("SELECT id::int FROM schedules WHERE id % 10 <> 0 ORDER BY id LIMIT 50");
    for (const s of picked) {
      await makeRun(t.db, { scheduleId: s.id, state: "done", scheduledFor: at(702 + reminderEvery), startedAt: at(702 + reminderEvery), finishedAt: at(702 + reminderEvery), durationMs: 5 });
    }
    await setClock(t.pool, at(703 + reminderEvery));
    expect((await measuredPass(t.url, t.pool)).checked).toBe(50);
    expect((await kinds())["late:resolved"]).toBe(50);
  }, 180_000);
});

describe("deadlines passing with nothing written", () => {
  it("a schedule becomes late, backlogged and stuck by the clock alone, each caught by the first pass after its instant", async () => {
    await setClock(t.pool, at(0));
    const late = await makeSchedule(t.db, { name: "late-by-time", everySeconds: 300, ...{ catchUp: "all" } }); // late after 630 s
    await makeRun(t.db, { scheduleId: late.id, state: "done", scheduledFor: at(0), startedAt: at(0), finishedAt: at(0), durationMs: 10 });
    const backlog = await makeSchedule(t.db, { name: "backlog-by-time", everySeconds: 3600, backlogAfterSeconds: 120 });
    await makeRuns(t.db, backlog.id, [{ scheduledFor: at(100) }]); // pending, due at 100 s: backlogged after 220 s
    await makeRun(t.db, { scheduleId: backlog.id, state: "done", scheduledFor: at(-60), startedAt: at(-60), finishedAt: at(-1), durationMs: 10 });
    const stuck = await makeSchedule(t.db, { ...RUNS_BY_HAND, enabled: true, name: "stuck-by-time", timeoutSeconds: 30, lateAfterSeconds: 100_000, backlogAfterSeconds: 100_000, leaseSeconds: 600 });
    const [pending] = await makeRuns(t.db, stuck.id, [{ scheduledFor: at(10) }]);
    await registerWorker(t.db, { id: "w-live", concurrency: 1, handlers: [{ name: "noop", idempotent: true, description: "noop" }], version: "t" });

    expect((await evaluateAlerts(t.db, opts)).checked).toBe(3);
    // A claim writes run_queue alone (no log): the pending run starts at 20 s with a long lease,
    // stuck after 30 + 60 = 90 s of running, at 110 s. Its 600 s lease puts the unserved instant at
    // 612 s and its backlog threshold the backlogged one later still: only the bound on what a
    // claim can change brings the pass back in time.
    await setClock(t.pool, at(20));
    await t.pool.query(
      "UPDATE run_queue SET state = 'running', attempts = 1, lease_owner = 'w-live', started_at = sk_now(), lease_expires_at = sk_now() + interval '1 day', run_after = sk_now() + interval '1 day' WHERE run_id = $1",
      [pending],
    );
    await setClock(t.pool, at(21));
    expect((await evaluateAlerts(t.db, opts)).checked).toBe(0);

    const firingAt = async (s: number) => {
      await setClock(t.pool, at(s));
      await registerWorker(t.db, { id: "w-live", concurrency: 1, handlers: [{ name: "noop", idempotent: true, description: "noop" }], version: "t" });
      await evaluateAlerts(t.db, opts);
      return (await events()).filter((e) => e.kind === "firing").map((e) => `${e.schedule_id}:${e.rule}`);
    };
    expect(await firingAt(105)).toEqual([]);
    expect(await firingAt(111)).toEqual([`${stuck.id}:stuck`]);
    expect(await firingAt(219)).toEqual([`${stuck.id}:stuck`]);
    expect(await firingAt(221)).toEqual([`${stuck.id}:stuck`, `${backlog.id}:backlogged`]);
    expect(await firingAt(630)).toEqual([`${stuck.id}:stuck`, `${backlog.id}:backlogged`]);
    expect(await firingAt(631)).toEqual([`${stuck.id}:stuck`, `${backlog.id}:backlogged`, `${late.id}:late`]);
    expect(await firingAt(700)).toHaveLength(3);
  });
});

describe("a pass that dies", () => {
  it("leaves what the log named to the next pass, which fires the alert once", async () => {
    await setClock(t.pool, at(0));
    const s = await makeSchedule(t.db, { ...RUNS_BY_HAND, enabled: true, name: "dies-mid-pass", everySeconds: 300 });
    expect((await evaluateAlerts(t.db, opts)).checked).toBeGreaterThanOrEqual(1);
    const before = (await events()).length;
    // A dead run (a logged write), then a pass that fails while storing what it found: the
    // statement that would store the schedule's next instant raises, as a lost connection would.
    await makeRun(t.db, { scheduleId: s.id, state: "dead", scheduledFor: at(-10) });
    await t.pool.query(`
      CREATE FUNCTION pg_temp_fail_store() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'store failed'; END $$;
      CREATE TRIGGER fail_store BEFORE UPDATE ON alert_watch FOR EACH STATEMENT EXECUTE FUNCTION pg_temp_fail_store()`);
    await setClock(t.pool, at(1));
    try {
      const err = await evaluateAlerts(t.db, opts).then(() => null, (e: Error) => e);
      expect((err?.cause as Error | undefined)?.message ?? err?.message).toMatch(/store failed/);
    } finally {
      await t.pool.query("DROP TRIGGER fail_store ON alert_watch; DROP FUNCTION pg_temp_fail_store()");
    }
    // The failed page rolled back with its events; the log still names the schedule.
    expect((await events()).length).toBe(before);
    await setClock(t.pool, at(2));
    expect((await evaluateAlerts(t.db, opts)).checked).toBe(1);
    expect((await events()).slice(before).map((e) => `${e.schedule_id}:${e.rule}:${e.kind}`)).toEqual([`${s.id}:failing:firing`]);
    await setClock(t.pool, at(3));
    expect((await evaluateAlerts(t.db, opts)).checked).toBe(0);
  });

  it("a page chosen as a deadlock's victim is evaluated again, and its alert fires once", async () => {
    await setClock(t.pool, at(0));
    const s = await makeSchedule(t.db, { ...RUNS_BY_HAND, enabled: true, name: "deadlock-victim", everySeconds: 300 });
    await evaluateAlerts(t.db, opts);
    const before = (await events()).length;
    await makeRun(t.db, { scheduleId: s.id, state: "dead", scheduledFor: at(-10) });
    // The page's store fails once as PostgreSQL fails a deadlock's victim (a sequence is not rolled back).
    await t.pool.query(`
      CREATE SEQUENCE victim_once;
      CREATE FUNCTION pg_temp_victim_once() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF nextval('victim_once') = 1 THEN RAISE EXCEPTION 'deadlock detected' USING ERRCODE = '40P01'; END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER victim_once BEFORE UPDATE ON alert_watch FOR EACH STATEMENT EXECUTE FUNCTION pg_temp_victim_once()`);
    try {
      await setClock(t.pool, at(1));
      const r = await evaluateAlerts(t.db, opts);
      expect({ checked: r.checked, firing: r.firing }).toEqual({ checked: 1, firing: 1 });
    } finally {
      await t.pool.query("DROP TRIGGER victim_once ON alert_watch; DROP FUNCTION pg_temp_victim_once(); DROP SEQUENCE victim_once");
    }
    expect((await events()).slice(before).map((e) => `${e.schedule_id}:${e.rule}:${e.kind}`)).toEqual([`${s.id}:failing:firing`]);
    await setClock(t.pool, at(2));
    expect((await evaluateAlerts(t.db, opts)).checked).toBe(0);
  });

  it("with pages evaluated at once, a page that fails ends the pass only once the other is done, and the next pass fires each alert once", async () => {
    await setClock(t.pool, at(0));
    const ids: number[] = [];
    for (let i = 0; i < 12; i++) ids.push((await makeSchedule(t.db, { ...RUNS_BY_HAND, enabled: true, name: `lanes-${i}`, everySeconds: 300 })).id);
    await evaluateAlerts(t.db, opts);
    const before = (await events()).length;
    for (const id of ids) await makeRun(t.db, { scheduleId: id, state: "dead", scheduledFor: at(-10) });
    // Pages of two: the third schedule's store raises at once, while the first page's store is
    // still sleeping on another connection.
    await t.pool.query(`
      CREATE FUNCTION pg_temp_fail_one() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.schedule_id = ${ids[2]} THEN RAISE EXCEPTION 'store failed'; END IF;
        IF NEW.schedule_id < ${ids[2]} THEN PERFORM pg_sleep(0.3); END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER fail_one BEFORE UPDATE ON alert_watch FOR EACH ROW EXECUTE FUNCTION pg_temp_fail_one()`);
    await setClock(t.pool, at(1));
    try {
      const err = await evaluateAlerts(t.db, { ...opts, pageSize: 2 }).then(() => null, (e: Error) => e);
      expect((err?.cause as Error | undefined)?.message ?? err?.message).toMatch(/store failed/);
      // Nothing of the pass runs on once it has returned: no other session is in a statement or a transaction.
      const { rows } = await t.pool.query<{ n: number }>(`
        SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid() AND state IN ('active', 'idle in transaction')`);
      expect(rows[0].n).toBe(0);
    } finally {
      await t.pool.query("DROP TRIGGER fail_one ON alert_watch; DROP FUNCTION pg_temp_fail_one()");
    }
    await setClock(t.pool, at(2));
    await evaluateAlerts(t.db, { ...opts, pageSize: 2 });
    const fired = (await events()).slice(before).map((e) => `${e.schedule_id}:${e.rule}:${e.kind}`);
    expect(fired.sort()).toEqual(ids.map((id) => `${id}:failing:firing`).sort());
  });
});

describe("concurrent evaluators", () => {
  let workers: Db[];
  beforeAll(() => {
    workers = [0, 1, 2, 3].map(() => createDb(createPool(t.url, { max: 2 })));
  });
  afterAll(async () => {
    await Promise.all((workers ?? []).map((w) => w.$client.end()));
  });

  it("four evaluators at once record one firing and one resolved event per transition of written and of timed changes", async () => {
    await setClock(t.pool, at(0));
    const ids: number[] = [];
    for (let i = 0; i < 20; i++) ids.push((await makeSchedule(t.db, { ...RUNS_BY_HAND, enabled: true, everySeconds: 300 })).id);
    const dead = await Promise.all(ids.slice(0, 10).map((id) => makeRun(t.db, { scheduleId: id, state: "dead", scheduledFor: at(-10) })));
    const all = async (s: number) => {
      await setClock(t.pool, at(s));
      for (let round = 0; round < 3; round++) await Promise.all(workers.map((w) => evaluateAlerts(w, opts)));
    };
    await all(1); // ten failing by a write
    await all(700); // all twenty late by time (never succeeded, created at 0, late after 630 s)
    await t.pool.query("UPDATE runs SET state = 'skipped', finished_at = sk_now() WHERE id = ANY($1)", [dead.map((r) => r.id)]);
    await t.pool.query("DELETE FROM run_queue WHERE run_id = ANY($1)", [dead.map((r) => r.id)]);
    for (const id of ids) await makeRun(t.db, { scheduleId: id, state: "done", scheduledFor: at(700), startedAt: at(700), finishedAt: at(700), durationMs: 5 });
    await all(701); // everything resolves
    const ev = await events();
    const per = new Map<string, string[]>();
    for (const e of ev) per.set(`${e.schedule_id}:${e.rule}`, [...(per.get(`${e.schedule_id}:${e.rule}`) ?? []), e.kind]);
    expect(per.size).toBe(30);
    for (const [key, kinds] of per) expect(kinds, key).toEqual(["firing", "resolved"]);
  });
});

/** A small seeded generator, so a failure can be replayed. */
function rng(seed: number) {
  let x = seed >>> 0;
  return () => {
    x = (x * 1664525 + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

describe("incremental verdicts against a full scan", () => {
  it("after every random step, the firing alerts are exactly the full-scan verdicts of every schedule", async () => {
    const random = rng(26);
    const pick = <T>(xs: T[]): T => xs[Math.floor(random() * xs.length)];
    let now = 0;
    await setClock(t.pool, at(now));
    const handlers = [{ name: "noop", idempotent: true, description: "noop" }];
    await registerWorker(t.db, { id: "w-rand", concurrency: 1, handlers, version: "t" });
    const ids: number[] = [];
    for (let i = 0; i < 24; i++) {
      const s = await makeSchedule(t.db, {
        ...RUNS_BY_HAND,
        enabled: true,
        everySeconds: pick([60, 120, 300]),
        handler: pick(["noop", "noop", "nobody"]),
        timeoutSeconds: pick([null, 30]),
        backlogAfterSeconds: pick([null, 90]),
        lateGraceSeconds: pick([null, 0]),
        leaseSeconds: pick([30, 600]),
      });
      ids.push(s.id);
    }
    const firing = async () =>
      (await t.pool.query<{ k: string }>("SELECT schedule_id || ':' || rule AS k FROM alert_states WHERE firing ORDER BY 1")).rows.map((r) => r.k);
    const fullScan = async () => {
      // The full pass: every schedule's health, judged by the rules, as it stands at this clock.
      const { rows } = await t.pool.query<{ id: number; name: string; deleted: boolean }>("SELECT id::int, name, deleted_at IS NOT NULL AS deleted FROM schedules");
      const health = await getScheduleHealth(t.db, rows.map((r) => r.id));
      return rows
        .flatMap((s) => verdictsFor(s, health.get(s.id)!, opts.publicUrl))
        .filter((v) => v.firing)
        .map((v) => `${v.scheduleId}:${v.rule}`)
        .sort();
    };
    // Reminders every 250 s in this test: after every pass each firing alert was notified (fired
    // or reminded) less than 250 s ago, and no two notifications of one alert are closer than that.
    const remind: EvaluateOptions = { ...opts, reminderSeconds: 250 };
    const notified = async () =>
      (await t.pool.query<{ k: string; kind: string; at: Date }>("SELECT schedule_id || ':' || rule AS k, kind, at FROM alert_events WHERE kind IN ('firing', 'reminder') ORDER BY id")).rows;
    for (let step = 0; step < 60; step++) {
      const ops = 1 + Math.floor(random() * 4);
      for (let o = 0; o < ops; o++) {
        const id = pick(ids);
        const op = random();
        if (op < 0.25) {
          await makeRuns(t.db, id, [{ scheduledFor: at(now + Math.floor(random() * 400) - 200) }]).catch(() => undefined);
        } else if (op < 0.45) {
          // A claim, as the claim writes it: run_queue alone.
          await t.pool.query(
            `UPDATE run_queue q SET state = 'running', attempts = q.attempts + 1, lease_owner = 'w-rand', started_at = sk_now(),
               lease_expires_at = sk_now() + interval '1 hour', run_after = sk_now() + interval '1 hour'
             WHERE q.ctid = (SELECT ctid FROM run_queue WHERE schedule_id = $1 AND state = 'pending' AND run_after <= sk_now() ORDER BY scheduled_for LIMIT 1)`,
            [id],
          );
        } else if (op < 0.7) {
          const { rows } = await t.pool.query<{ run_id: number; attempts: number }>("SELECT run_id::int, attempts FROM run_queue WHERE schedule_id = $1 AND state = 'running' LIMIT 1", [id]);
          if (rows[0]) {
            const outcome = random() < 0.7 ? ("succeeded" as const) : ("failed" as const);
            await finishRuns(t.db, "w-rand", [{ id: rows[0].run_id, scheduleId: id, attempt: rows[0].attempts, outcome, durationMs: Math.floor(random() * 5000), nonRetryable: random() < 0.5 }]);
          }
        } else if (op < 0.75) {
          await t.pool.query("UPDATE schedules SET enabled = NOT enabled WHERE id = $1", [id]);
        } else if (op < 0.8) {
          await t.pool.query("UPDATE schedules SET late_after_seconds = $2 WHERE id = $1", [id, pick([null, 100, 1000])]);
        } else if (op < 0.85) {
          // The worker serving "noop" stops heartbeating, or comes back.
          if (random() < 0.5) await t.pool.query("UPDATE workers SET last_heartbeat_at = sk_now() - interval '1 day' WHERE id = 'w-rand'");
          else await registerWorker(t.db, { id: "w-rand", concurrency: 1, handlers, version: "t" });
        }
      }
      now += pick([0, 1, 5, 30, 61, 100, 300]);
      await setClock(t.pool, at(now));
      await evaluateAlerts(t.db, remind);
      const want = await fullScan();
      expect(await firing(), `step ${step} at ${now} s`).toEqual(want);
      const last = new Map<string, number>();
      for (const n of await notified()) {
        const prev = last.get(n.k);
        const t1 = new Date(n.at).getTime();
        // A new firing follows a resolve and may come at any time; a reminder waits the interval.
        if (n.kind === "reminder" && prev !== undefined && t1 - prev < 250_000) expect.fail(`${n.k} reminded within 250 s of its last notification (step ${step})`);
        last.set(n.k, t1);
      }
      for (const k of want) expect(at(now).getTime() - last.get(k)!, `${k} reminded at step ${step}, ${now} s`).toBeLessThan(250_000);
    }
    // One event per transition: for every (schedule, rule), firing and resolved alternate.
    const per = new Map<string, string[]>();
    for (const e of (await events()).filter((x) => x.kind !== "reminder")) per.set(`${e.schedule_id}:${e.rule}`, [...(per.get(`${e.schedule_id}:${e.rule}`) ?? []), e.kind]);
    expect(per.size).toBeGreaterThan(3);
    for (const [key, kinds] of per) kinds.forEach((k, i) => expect(k, `${key} #${i}`).toBe(i % 2 === 0 ? "firing" : "resolved"));
  }, 120_000);
});


