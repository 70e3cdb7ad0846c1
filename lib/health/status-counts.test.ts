// The counts by status, handler and rule that the alert pass keeps (schedule_counts, rule_counts,
// kept by the trigger on alert_watch) against an oracle outside them: every live schedule's health
// read at the same database clock (getScheduleHealth, whose status is deriveStatus's), counted
// here. After random writes and clock moves, each followed by a pass; with several evaluators at
// once; under concurrent writes to alert_watch itself; and on a database upgraded to them.
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { evaluateAlerts, type EvaluateOptions } from "../alerts/evaluate";
import { SYSTEM_ACTOR } from "../audit/record";
import { createDb, createPool, type Db } from "../db/client";
import { migrateDatabase } from "../db/migrate";
import { claimRuns } from "../runs/claim";
import { finishRuns } from "../runs/finish";
import { skipRunByOperator } from "../runs/operator-skip";
import { deleteSchedule, pauseSchedule, resumeSchedule, updateSchedule } from "../schedules/mutations";
import { setClock } from "../testing/clock";
import { createTestDatabase, setupTestDatabase, type TestDatabase } from "../testing/db";
import { makeRun, makeRuns, makeSchedule } from "../testing/factories";
import { firstMigrations, indexOfMigration } from "../testing/migrations";
import { seededRandom } from "../testing/random";
import { registerWorker } from "../workers/registry";
import { getOverview } from "./overview";
import { getScheduleHealth, HEALTH_STATUSES } from "./schedule-health";
import { readStatusCounts } from "./status-counts";

const t = setupTestDatabase({ poolSize: 6 });
const opts: EvaluateOptions = { publicUrl: "http://console.test", reminderSeconds: 0 };
const T0 = Date.parse("2030-01-01T10:00:00Z");
const at = (seconds: number) => new Date(T0 + seconds * 1000);
const HANDLERS = ["noop", "report", "nobody"]; // a live worker serves the first two

type Counts = { byStatus: Record<string, number>; rules: Record<string, number> };

/** The counts as stored, read by SQL ("status handler" → n, rule → n; rows at 0 left out). */
async function stored(pool: Pick<pg.Pool, "query">): Promise<Counts> {
  const s = await pool.query<{ k: string; n: string }>("SELECT status || ' ' || handler AS k, n::text FROM schedule_counts WHERE n <> 0");
  const r = await pool.query<{ rule: string; n: string }>("SELECT rule, n::text FROM rule_counts WHERE n <> 0");
  return { byStatus: Object.fromEntries(s.rows.map((x) => [x.k, Number(x.n)])), rules: Object.fromEntries(r.rows.map((x) => [x.rule, Number(x.n)])) };
}

/** The oracle: every live schedule's health at the database clock now, counted here. */
async function fullScan(db: TestDatabase): Promise<Counts> {
  const { rows } = await db.pool.query<{ id: number; handler: string }>("SELECT id::int, handler FROM schedules WHERE deleted_at IS NULL");
  const health = await getScheduleHealth(db.db, rows.map((r) => r.id));
  const out: Counts = { byStatus: {}, rules: {} };
  for (const s of rows) {
    const h = health.get(s.id)!;
    out.byStatus[`${h.status} ${s.handler}`] = (out.byStatus[`${h.status} ${s.handler}`] ?? 0) + 1;
    for (const [rule, holds] of Object.entries(h.rules)) if (holds) out.rules[rule] = (out.rules[rule] ?? 0) + 1;
  }
  return out;
}

/** The Overview's counts by status, as the oracle's counts add up by status. */
const byStatusOnly = (c: Counts) =>
  Object.fromEntries(HEALTH_STATUSES.map((st) => [st, Object.entries(c.byStatus).reduce((n, [k, v]) => (k.startsWith(`${st} `) ? n + v : n), 0)]));

/** What the random steps act on: the live schedules, and those made since the last pass. */
type Fleet = { live: { id: number; name: string }[]; madeSincePass: Set<number> };

/**
 * 1 to 4 random operations, through the product's own functions where it has them: create,
 * pause / resume, edit the handler, delete (keeping history or not), a dead run, a discard, pending
 * runs, a claim, runs finishing (succeeded or failed), the worker serving two handlers going quiet
 * or coming back.
 */
async function randomOperations(r: ReturnType<typeof seededRandom>, fleet: Fleet, now: number): Promise<void> {
  for (let o = 1 + r.int(4); o > 0; o--) {
    const op = r.next();
    const s = fleet.live.length > 0 ? r.pick(fleet.live) : null;
    if (op < 0.12 || s === null) {
      const made = await makeSchedule(t.db, {
        enabled: r.next() < 0.85,
        catchUp: "all",
        everySeconds: r.pick([60, 300, 3600]),
        handler: r.pick(HANDLERS),
        backlogAfterSeconds: r.pick([null, 90]),
        lateAfterSeconds: r.pick([null, null, 200]),
        createdAt: at(now - r.int(4000)),
      });
      fleet.live.push({ id: made.id, name: made.name });
      fleet.madeSincePass.add(made.id);
    } else if (op < 0.2) {
      const { rows } = await t.pool.query<{ enabled: boolean }>("SELECT enabled FROM schedules WHERE id = $1", [s.id]);
      await (rows[0].enabled ? pauseSchedule : resumeSchedule)(t.db, s.name, SYSTEM_ACTOR);
    } else if (op < 0.26) {
      const { rows } = await t.pool.query<{ version: number }>("SELECT version FROM schedules WHERE id = $1", [s.id]);
      await updateSchedule(t.db, s.name, { handler: r.pick(HANDLERS) }, rows[0].version, SYSTEM_ACTOR);
    } else if (op < 0.31) {
      await deleteSchedule(t.db, s.name, { keepHistory: r.next() < 0.5 }, SYSTEM_ACTOR);
      fleet.live = fleet.live.filter((x) => x.id !== s.id);
      fleet.madeSincePass.delete(s.id);
    } else if (op < 0.4) {
      await makeRun(t.db, { scheduleId: s.id, state: "dead", scheduledFor: at(now - 1 - r.int(600)) }).catch(() => undefined); // a slot taken already
    } else if (op < 0.46) {
      const { rows } = await t.pool.query<{ id: number }>("SELECT run_id::int AS id FROM run_queue WHERE schedule_id = $1 AND state = 'dead' LIMIT 1", [s.id]);
      if (rows[0]) await skipRunByOperator(t.db, rows[0].id, "discard", SYSTEM_ACTOR);
    } else if (op < 0.62) {
      await makeRuns(t.db, s.id, [{ scheduledFor: at(now + 100 - r.int(400)) }]).catch(() => undefined);
    } else if (op < 0.75) {
      await claimRuns(t.db, { workerId: "w-counts", partitions: null, limit: 1 + r.int(3) });
    } else if (op < 0.92) {
      const { rows } = await t.pool.query<{ id: number; schedule_id: number; attempts: number }>(
        "SELECT run_id::int AS id, schedule_id::int, attempts FROM run_queue WHERE state = 'running' AND lease_owner = 'w-counts' ORDER BY run_id LIMIT 2",
      );
      const results = rows.map((x) => ({ id: x.id, scheduleId: x.schedule_id, attempt: x.attempts, outcome: r.next() < 0.7 ? ("succeeded" as const) : ("failed" as const), durationMs: 10, nonRetryable: r.next() < 0.5 }));
      await finishRuns(t.db, "w-counts", results);
    } else if (r.next() < 0.5) {
      await t.pool.query("UPDATE workers SET last_heartbeat_at = sk_now() - interval '1 day' WHERE id = 'w-counts'");
    } else {
      await registerWorkerServing(t.db);
    }
  }
}

const registerWorkerServing = (db: Db) =>
  registerWorker(db, { id: "w-counts", concurrency: 4, version: "t", handlers: HANDLERS.slice(0, 2).map((name) => ({ name, idempotent: true, description: name })) });

describe("the counts by status the alert pass keeps", () => {
  it("after random operations, each followed by a pass, equal a full scan of every schedule; those made since the last pass count as not evaluated", async () => {
    const r = seededRandom(26);
    let now = 0;
    await setClock(t.pool, at(now));
    await registerWorkerServing(t.db);
    const fleet: Fleet = { live: [], madeSincePass: new Set() };
    expect(await readStatusCounts(t.db)).toEqual({ byStatusHandler: [], rulesHolding: { late: 0, failing: 0, backlogged: 0, unserved: 0, stuck: 0 }, notEvaluated: 0, asOf: null });
    for (let step = 0; step < 70; step++) {
      await randomOperations(r, fleet, now);
      now += r.pick([0, 1, 30, 61, 200, 700, 3600]);
      await setClock(t.pool, at(now));
      // Not judged yet: counted apart, in no status.
      expect((await readStatusCounts(t.db)).notEvaluated, `step ${step}`).toBe(fleet.madeSincePass.size);
      await evaluateAlerts(t.db, opts);
      fleet.madeSincePass.clear();
      const oracle = await fullScan(t);
      expect(await stored(t.pool), `step ${step} at ${now} s`).toEqual(oracle);
      const read = await readStatusCounts(t.db);
      expect(read.notEvaluated).toBe(0);
      expect(read.asOf).toEqual(at(now));
      const overview = await getOverview(t.db);
      expect(overview.statusCounts, `step ${step}: the Overview`).toEqual(byStatusOnly(oracle));
      expect({ schedules: overview.totals.schedules, paused: overview.totals.paused }).toEqual({ schedules: fleet.live.length, paused: byStatusOnly(oracle).paused });
    }
    expect(fleet.live.length).toBeGreaterThan(5);
    const seen = await t.pool.query<{ status: string }>("SELECT DISTINCT status::text AS status FROM schedule_counts");
    expect(seen.rows.map((x) => x.status).sort(), "the walk went through every status").toEqual([...HEALTH_STATUSES].sort());

    // A pass with nothing changed and no instant passed looks again only at what it must (a firing
    // schedule, one waiting past the unserved threshold) and writes no count: every row as it was.
    const rows = () => t.pool.query("SELECT status::text, handler, n, xmin::text FROM schedule_counts UNION ALL SELECT rule, '', n, xmin::text FROM rule_counts ORDER BY 1, 2");
    const before = (await rows()).rows;
    const due = await t.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM alert_watch WHERE check_at <= sk_now()");
    const idle = await evaluateAlerts(t.db, opts);
    expect(idle).toMatchObject({ evaluated: true, checked: due.rows[0].n });
    expect(idle.checked).toBeLessThan(fleet.live.length);
    expect((await rows()).rows).toEqual(before);
  }, 240_000);

  describe("with four evaluators at once", () => {
    let workers: Db[];
    beforeAll(() => {
      workers = [0, 1, 2, 3].map(() => createDb(createPool(t.url, { max: 3 })));
    });
    afterAll(async () => {
      await Promise.all((workers ?? []).map((w) => w.$client.end()));
    });

    it("stay exact over random writes and clock moves", async () => {
      const r = seededRandom(4);
      let now = 0;
      await setClock(t.pool, at(now));
      await registerWorkerServing(t.db);
      const fleet: Fleet = { live: [], madeSincePass: new Set() };
      for (let i = 0; i < 30; i++) {
        const s = await makeSchedule(t.db, { catchUp: "all", everySeconds: r.pick([60, 300]), handler: r.pick(HANDLERS), createdAt: at(-r.int(2000)) });
        fleet.live.push({ id: s.id, name: s.name });
      }
      for (let step = 0; step < 20; step++) {
        await randomOperations(r, fleet, now);
        now += r.pick([0, 30, 61, 700]);
        await setClock(t.pool, at(now));
        // Each round, one evaluator takes the lock and the others skip or follow it.
        for (let round = 0; round < 2; round++) await Promise.all(workers.map((w) => evaluateAlerts(w, opts)));
        expect(await stored(t.pool), `step ${step}`).toEqual(await fullScan(t));
      }
    }, 120_000);
  });

  it("stay equal to alert_watch under concurrent inserts, updates and deletes of its rows", async () => {
    // The trigger alone, without the pass's lock: four connections write overlapping rows at once.
    const r = seededRandom(9);
    const statuses = HEALTH_STATUSES;
    const value = () => ({ status: r.next() < 0.15 ? null : r.pick(statuses), handler: r.pick(["a", "b", "c"]), rules: r.pick([[], ["late"], ["failing", "late"], ["unserved"], ["backlogged", "stuck"]]) });
    const writers = [0, 1, 2, 3].map(async (w) => {
      const client = await t.pool.connect();
      try {
        for (let k = 0; k < 150; k++) {
          const id = 1 + r.int(40);
          const v = value();
          const op = r.next();
          if (op < 0.45) {
            await client.query(
              `INSERT INTO alert_watch (schedule_id, check_at, status, handler, rules) VALUES ($1, sk_now(), $2, $3, $4)
               ON CONFLICT (schedule_id) DO UPDATE SET status = excluded.status, handler = excluded.handler, rules = excluded.rules`,
              [id, v.status, v.handler, v.rules],
            );
          } else if (op < 0.7) {
            await client.query("UPDATE alert_watch SET status = $2, handler = $3, rules = $4 WHERE schedule_id = $1", [id, v.status, v.handler, v.rules]);
          } else if (op < 0.85) {
            await client.query("UPDATE alert_watch SET check_at = check_at + interval '1 s' WHERE schedule_id = $1", [id]);
          } else if (op < 0.95) {
            await client.query("DELETE FROM alert_watch WHERE schedule_id = $1", [id]);
          } else {
            // Many rows in one statement, in a range of this writer's own.
            await client.query(
              `INSERT INTO alert_watch (schedule_id, check_at, status, handler, rules)
               SELECT g, sk_now(), $2, $3, $4 FROM generate_series($1::int, $1::int + 19) g
               ON CONFLICT (schedule_id) DO UPDATE SET status = excluded.status, handler = excluded.handler, rules = excluded.rules`,
              [1000 + w * 100, v.status, v.handler, v.rules],
            );
          }
        }
      } finally {
        client.release();
      }
    });
    await Promise.all(writers);
    const s = await t.pool.query<{ k: string; n: string }>(
      "SELECT status || ' ' || handler AS k, count(*)::text AS n FROM alert_watch WHERE status IS NOT NULL GROUP BY 1",
    );
    const rl = await t.pool.query<{ rule: string; n: string }>(
      "SELECT rule, count(*)::text AS n FROM alert_watch, unnest(rules) AS rule WHERE status IS NOT NULL GROUP BY 1",
    );
    expect(s.rows.length).toBeGreaterThan(3);
    expect(await stored(t.pool)).toEqual({
      byStatus: Object.fromEntries(s.rows.map((x) => [x.k, Number(x.n)])),
      rules: Object.fromEntries(rl.rows.map((x) => [x.rule, Number(x.n)])),
    });
  });
});

describe("an install upgraded to the counts", () => {
  let old: TestDatabase;
  afterAll(async () => {
    await old?.drop();
  });

  it("counts nothing and reports every live schedule as not evaluated until the first pass, which fills the counts", async () => {
    old = await createTestDatabase({ template: "empty", poolSize: 3 });
    await migrateDatabase(old.url, { migrationsFolder: firstMigrations(indexOfMigration("0038_status_counts")) });
    await setClock(old.pool, at(0));
    // Written in SQL against the schema before the counts: schedules, some runs, and the watch list
    // as a pass of that version leaves it (every schedule evaluated, looked at again later).
    await old.pool.query(`
      INSERT INTO schedules (name, handler, every_seconds, enabled, next_slot_at, partition, created_at, updated_at, deleted_at)
      SELECT 'old-' || g, (ARRAY['noop', 'report'])[1 + g % 2], 300, g % 7 <> 0, sk_now(), 0, sk_now() - interval '1 hour', sk_now(),
        CASE WHEN g % 10 = 0 THEN sk_now() END
      FROM generate_series(1, 60) g`);
    await old.pool.query(`
      INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, attempts, max_attempts, started_at, finished_at)
      SELECT s.id, 0, v.at, v.at, v.at, v.state, CASE WHEN v.state = 'pending' THEN 0 ELSE 1 END, 1,
        CASE WHEN v.state = 'done' THEN v.at END, CASE WHEN v.state = 'done' THEN v.at + interval '1 minute' END
      FROM schedules s CROSS JOIN LATERAL (SELECT sk_now() - interval '10 minutes' AS at, (ARRAY['done', 'dead', 'pending']::run_state[])[1 + s.id % 3] AS state) v
      WHERE s.id % 2 = 0`);
    await old.pool.query("INSERT INTO alert_watch (schedule_id, check_at) SELECT id, sk_now() + interval '12 hours' FROM schedules ON CONFLICT (schedule_id) DO UPDATE SET check_at = excluded.check_at");
    await old.pool.query("DELETE FROM alert_changes");

    await migrateDatabase(old.url);
    const live = Number((await old.pool.query<{ n: string }>("SELECT count(*) AS n FROM schedules WHERE deleted_at IS NULL")).rows[0].n);
    expect(await stored(old.pool)).toEqual({ byStatus: {}, rules: {} });
    const due = await old.pool.query<{ n: string }>(
      "SELECT count(*) AS n FROM alert_watch w JOIN schedules s ON s.id = w.schedule_id WHERE s.deleted_at IS NULL AND w.check_at = '-infinity' AND w.status IS NULL",
    );
    expect(Number(due.rows[0].n)).toBe(live);
    expect(await readStatusCounts(old.db)).toMatchObject({ byStatusHandler: [], notEvaluated: live, asOf: null });

    await evaluateAlerts(old.db, opts);
    const oracle = await fullScan(old);
    expect(Object.values(oracle.byStatus).reduce((a, b) => a + b, 0)).toBe(live);
    expect(await stored(old.pool)).toEqual(oracle);
    expect(await readStatusCounts(old.db)).toMatchObject({ notEvaluated: 0, asOf: at(0) });
  });
});
