// The stored last success (schedule_last_success, raised by the alert pass from the successes the
// runs triggers log) and a schedule's health against an oracle read straight from the runs rows: the latest finished_at of each schedule's done runs.
// Runs are claimed and finished the way workers do it (claimRuns, finishRuns), in shuffled batches,
// with retries, shutdown releases, dead runs re-queued and the clock stepping back; the list's
// lastSuccess sort and the Overview's worst 50 are checked against a sort worked out here; and the
// plans of the list's sort and search are checked to read their indexes.
import type pg from "pg";
import { describe, expect, it } from "vitest";
import { SYSTEM_ACTOR } from "../audit/record";
import { createDb } from "../db/client";
import { getFleetSummary } from "../health/fleet-summary";
import { finishRuns, type RunOutcome } from "../runs/finish";
import { claimRuns } from "../runs/claim";
import { requeueRuns } from "../runs/requeue";
import { advanceClock } from "../testing/clock";
import { setupTestDatabase } from "../testing/db";
import { seededRandom } from "../testing/random";
import { makeRuns, makeSchedule, slots } from "../testing/factories";
import { seedFleet } from "../testing/fleet";
import { genericPlan, indexesWalked, seqScanned, type PlanNode } from "../testing/plans";
import { getScheduleHealth } from "../health/schedule-health";
import { applyLastSuccessChanges } from "./last-success";
import { searchSchedules, type ScheduleListQuery } from "./list";

const T0 = new Date("2030-01-01T10:00:00Z");
const t = setupTestDatabase({ clock: T0 });

function shuffle<T>(xs: T[], r: ReturnType<typeof seededRandom>): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = r.int(i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** Stored and oracle last success per schedule, as text (microseconds exact). */
async function compare(pool: pg.Pool) {
  const { rows } = await pool.query<{ id: string; stored: string | null; oracle: string | null }>(`
    SELECT s.id, l.last_success_at::text AS stored,
      (SELECT max(r.finished_at) FROM runs r WHERE r.schedule_id = s.id AND r.state = 'done')::text AS oracle
    FROM schedules s LEFT JOIN schedule_last_success l ON l.schedule_id = s.id ORDER BY s.id`);
  return rows;
}

/** Seconds since each schedule's latest done finish, by SQL on the runs alone. */
async function sinceOracle(pool: pg.Pool): Promise<Map<number, number>> {
  const { rows } = await pool.query<{ id: string; since: number }>(`
    SELECT r.schedule_id AS id, extract(epoch FROM sk_now() - max(r.finished_at))::float8 AS since
    FROM runs r WHERE r.state = 'done' GROUP BY r.schedule_id`);
  return new Map(rows.map((x) => [Number(x.id), Math.max(0, x.since)]));
}

describe("schedule_last_success", () => {
  it("is the latest finish of the schedule's done runs after shuffled finishes, retries, releases, requeues and a clock stepping back", async () => {
    const r = seededRandom(26);
    const ids: number[] = [];
    for (let k = 0; k < 6; k++) ids.push((await makeSchedule(t.db, { name: `ls-${k}`, retryMaxAttempts: 2 })).id);
    for (const id of ids) await makeRuns(t.db, id, slots(new Date(T0.getTime() - 3_600_000), 10, 60_000).map((at) => ({ scheduledFor: at })));
    let successes = 0;
    let backwards = 0;
    let applied = 0;
    for (let step = 0; step < 60; step++) {
      const claimed = await claimRuns(t.db, { workerId: "w1", partitions: null, limit: 1 + r.int(12) });
      // Finish in shuffled batches: a later slot may finish before an earlier one, or in the same statement.
      const order = shuffle(claimed, r);
      while (order.length > 0) {
        const batch = order.splice(0, 1 + r.int(4));
        const results = batch.map((c) => {
          const outcome = r.pick<RunOutcome>(["succeeded", "succeeded", "failed", "aborted"]);
          if (outcome === "succeeded") successes++;
          return { id: c.id, scheduleId: c.scheduleId, queueTid: r.next() < 0.7 ? c.queueTid : undefined, attempt: c.attempt, outcome, retryDelaySeconds: 0 };
        });
        await finishRuns(t.db, "w1", results);
        await advanceClock(t.pool, r.int(3) * 1000);
      }
      if (r.next() < 0.3) {
        const dead = await t.pool.query<{ id: string }>("SELECT run_id AS id FROM run_queue WHERE state = 'dead'");
        if (dead.rows.length > 0) await requeueRuns(t.db, dead.rows.map((d) => Number(d.id)), SYSTEM_ACTOR);
      }
      // Mostly forward; sometimes back, so a run finishing now finishes "before" an earlier success.
      if (r.next() < 0.2) {
        backwards++;
        await advanceClock(t.pool, -(60_000 + r.int(600_000)));
      } else await advanceClock(t.pool, r.int(120_000));
      // A schedule's health sees every success at once, the log not applied yet included.
      const health = await getScheduleHealth(t.db, ids);
      const since = await sinceOracle(t.pool);
      expect(ids.map((id) => health.get(id)!.sinceLastSuccessSeconds)).toEqual(ids.map((id) => since.get(id) ?? null));
      // Asked for one schedule, as a search with one result asks: the log rows naming others are skipped, not its own.
      const one = r.pick(ids);
      expect((await getScheduleHealth(t.db, [one])).get(one)!.sinceLastSuccessSeconds).toBe(since.get(one) ?? null);
      // The stored value is what the runs say once the alert pass has applied the log (every other step).
      if (r.next() < 0.5) {
        applied++;
        await applyLastSuccessChanges(t.db);
        const now = await compare(t.pool);
        expect(now.map((row) => row.stored)).toEqual(now.map((row) => row.oracle));
      }
    }
    expect(successes).toBeGreaterThan(20);
    expect(backwards).toBeGreaterThan(3);
    expect(applied).toBeGreaterThan(10);
    // Every schedule succeeded at some point, and what is stored is what the runs say.
    await applyLastSuccessChanges(t.db);
    expect(Number((await t.pool.query("SELECT count(*) AS n FROM last_success_changes")).rows[0].n)).toBe(0);
    const rows = await compare(t.pool);
    expect(rows.every((row) => row.oracle !== null)).toBe(true);
    expect(rows.map((row) => row.stored)).toEqual(rows.map((row) => row.oracle));
  });

  it("never goes down: a done run written again or inserted with an older finish leaves the later success", async () => {
    const s = (await makeSchedule(t.db)).id;
    const [late, early] = await makeRuns(t.db, s, [{ scheduledFor: T0 }, { scheduledFor: new Date(T0.getTime() - 60_000) }]);
    await t.pool.query("UPDATE runs SET state = 'done', finished_at = $2 WHERE id = $1", [late, "2030-01-01T10:05:00Z"]);
    await t.pool.query("UPDATE runs SET state = 'done', finished_at = $2 WHERE id = $1", [early, "2030-01-01T10:01:00Z"]);
    await t.pool.query(
      `INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, attempts, max_attempts, finished_at)
       SELECT id, partition, '2029-12-31T09:00:00Z', '2029-12-31T09:00:00Z', '2029-12-31T09:00:00Z', 'done', 1, 1, '2029-12-31T09:00:05Z' FROM schedules WHERE id = $1`,
      [s],
    );
    const read = async () => {
      await applyLastSuccessChanges(t.db);
      return (await t.pool.query<{ at: string }>("SELECT last_success_at::text AS at FROM schedule_last_success WHERE schedule_id = $1", [s])).rows[0].at;
    };
    expect(await read()).toBe("2030-01-01 10:05:00+00");
    // Retention removing the run leaves the schedule's last success as it was: it happened.
    await t.pool.query("DELETE FROM runs WHERE id = $1", [late]);
    expect(await read()).toBe("2030-01-01 10:05:00+00");
  });
});

describe("the lastSuccess order", () => {
  it("pages through the list and picks the Overview's worst 50 exactly as a sort of the runs says", async () => {
    const r = seededRandom(7);
    const n = 260;
    const made: { id: number; handler: string; deleted: boolean }[] = [];
    for (let k = 0; k < n; k++) {
      const handler = `h${k % 3}`;
      const s = await makeSchedule(t.db, { name: `order-${String(k).padStart(3, "0")}`, handler, enabled: r.next() < 0.9, everySeconds: 300 });
      made.push({ id: s.id, handler, deleted: false });
    }
    // Done runs at whole minutes (many ties between schedules, broken by id), several per schedule
    // in random order; a quarter never succeed (pending or dead runs only); a few are deleted.
    const values: string[] = [];
    for (const m of made) {
      const kind = r.int(4);
      const count = 1 + r.int(4);
      for (let j = 0; j < count; j++) {
        const slot = new Date(T0.getTime() - (j + 1) * 3_600_000).toISOString();
        const finished = new Date(T0.getTime() - r.int(90) * 60_000).toISOString();
        const state = kind === 0 ? r.pick(["pending", "dead"]) : r.pick(["done", "done", "dead"]);
        values.push(`(${m.id}, '${slot}', '${state}', ${state === "done" ? `'${finished}'` : "NULL"})`);
      }
    }
    await t.pool.query(`
      INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, attempts, max_attempts, finished_at)
      SELECT s.id, s.partition, v.slot::timestamptz, v.slot::timestamptz, v.slot::timestamptz, v.state::run_state, 1, 1, v.fin::timestamptz
      FROM (VALUES ${values.join(", ")}) AS v(id, slot, state, fin) JOIN schedules s ON s.id = v.id`);
    for (const m of made) if (r.next() < 0.05) m.deleted = true;
    await t.pool.query("UPDATE schedules SET deleted_at = sk_now() WHERE id = ANY($1::bigint[])", [made.filter((m) => m.deleted).map((m) => m.id)]);
    // The order is as of the last alert pass, which applies the logged successes.
    await applyLastSuccessChanges(t.db);

    // The oracle: the runs rows, sorted here.
    const oracle = await t.pool.query<{ id: string; at: string | null }>(
      "SELECT schedule_id AS id, (extract(epoch FROM max(finished_at)) * 1000)::float8::text AS at FROM runs WHERE state = 'done' GROUP BY schedule_id",
    );
    const at = new Map(oracle.rows.map((o) => [Number(o.id), Number(o.at)]));
    const expected = (keep: (m: (typeof made)[number]) => boolean) =>
      made
        .filter((m) => !m.deleted && keep(m))
        .sort((a, b) => (at.get(a.id) ?? Number.NEGATIVE_INFINITY) - (at.get(b.id) ?? Number.NEGATIVE_INFINITY) || a.id - b.id)
        .map((m) => m.id);
    expect(made.some((m) => !at.has(m.id))).toBe(true);

    const walk = async (q: ScheduleListQuery) => {
      const seen: number[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 500; pages++) {
        const page = await searchSchedules(t.db, { ...q, sort: "lastSuccess", limit: 7, cursor });
        seen.push(...page.schedules.map((s) => s.id));
        if (page.nextCursor === null) return seen;
        cursor = page.nextCursor;
      }
      throw new Error("the walk did not end");
    };
    expect(await walk({})).toEqual(expected(() => true));
    expect(await walk({ handler: "h1" })).toEqual(expected((m) => m.handler === "h1"));

    const summary = await getFleetSummary(t.db);
    expect(summary.worstSinceLastSuccess).toEqual(expected(() => true).slice(0, 50));
  });
});

describe("plans at fleet size", () => {
  it("reads the lastSuccess sort from schedule_last_success_order_idx and the search from schedule_search_trgm_idx", async () => {
    await seedFleet(t.pool, 20_000);
    // A bulk insert leaves its trigram entries in the GIN index's pending list, which the planner
    // prices as a scan of all of it; vacuum (or autovacuum) moves them into the index proper.
    await t.pool.query("VACUUM ANALYZE schedules, schedule_search");
    // Record the list's statements as they are sent, then EXPLAIN each as the pools plan it
    // (generically, lib/db/client.ts), with its own values.
    const sent: { text: string; values: unknown[] }[] = [];
    const spy = Object.create(t.pool) as pg.Pool;
    spy.query = ((q: string | { text: string; values?: unknown[] }, v?: unknown[]) => {
      const text = typeof q === "string" ? q : q.text;
      sent.push({ text, values: (typeof q === "string" ? v : (q.values ?? v)) ?? [] });
      return (t.pool.query as (...a: unknown[]) => unknown)(q, v);
    }) as pg.Pool["query"];
    const db = createDb(spy);
    const plan = async (q: ScheduleListQuery) => {
      sent.length = 0;
      const first = await searchSchedules(db, { limit: 50, ...q });
      const key = sent.find((s) => /SELECT s\.id, \(/.test(s.text))!;
      return { nodes: await genericPlan(t.pool, key.text, key.values), first };
    };
    const types = (nodes: PlanNode[]) => nodes.map((n) => n["Node Type"]);
    const sorted = await plan({ sort: "lastSuccess" });
    expect(indexesWalked(sorted.nodes)).toContain("schedule_last_success_order_idx");
    expect(types(sorted.nodes)).not.toContain("Sort");
    expect(seqScanned(sorted.nodes)).toEqual([]);
    const next = await plan({ sort: "lastSuccess", cursor: sorted.first.nextCursor! });
    expect(indexesWalked(next.nodes)).toContain("schedule_last_success_order_idx");
    expect(types(next.nodes)).not.toContain("Sort");
    expect(seqScanned(next.nodes)).toEqual([]);
    const search = await plan({ search: "needle" });
    expect(indexesWalked(search.nodes)).toContain("schedule_search_trgm_idx");
    expect(seqScanned(search.nodes)).toEqual([]);
    // 1 in 1,000 says "needle" in its description (lib/testing/fleet.ts): 20 of 20,000.
    expect(search.first.schedules.map((s) => s.description)).toEqual(Array(20).fill("the needle job"));
    // One name of 20,000, a term of two words: the rows of its rarer word are read through the
    // trigram index (lib/schedules/search-probe.ts), planned from the word itself, not a pattern
    // it must guess at (0.5 % of the table, 100 rows here); the page is then read by their ids.
    // Nothing walks every schedule in name order probing for the one it wanted, as a guessed
    // pattern once made the planner do at fleet size.
    const one = await plan({ search: "fleet-0012345" });
    const probe = sent.find((s) => s.text.startsWith("SELECT schedule_id FROM schedule_search"))!;
    const probeNodes = await genericPlan(t.pool, probe.text, probe.values);
    expect(probeNodes.find((n) => n["Index Name"] === "schedule_search_trgm_idx")?.["Plan Rows"]).toBeLessThan(20);
    expect(indexesWalked(one.nodes)).toContain("schedules_pkey");
    expect(indexesWalked(one.nodes)).not.toContain("schedules_name_live_key");
    expect(seqScanned(one.nodes)).toEqual([]);
    expect(one.first.schedules.map((s) => s.name)).toEqual(["fleet-0012345"]);
    // The Overview's statement walks the same index for its worst 50.
    sent.length = 0;
    await getFleetSummary(db);
    const overview = sent.find((x) => x.text.includes("worst_success"))!;
    expect(indexesWalked(await genericPlan(t.pool, overview.text, overview.values))).toContain("schedule_last_success_order_idx");
    // A fleet seed and a VACUUM: about 2 s alone, past the default 60 s once on a loaded 2-core machine.
  }, 180_000);
});
