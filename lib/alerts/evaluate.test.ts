import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, createPool, type Db } from "../db/client";
import { setClock } from "../testing/clock";
import { setupTestDatabase } from "../testing/db";
import { makeRun, makeSchedule } from "../testing/factories";
import { registerWorker } from "../workers/registry";
import { evaluateAlerts, type EvaluateOptions } from "./evaluate";

const t = setupTestDatabase({ poolSize: 3 });
/** Three evaluators, each with its own two connections (lock session + page transactions), like three worker processes. */
let workers: Db[];
const opts: EvaluateOptions = { publicUrl: "http://console.test", reminderSeconds: 3600 };

beforeAll(async () => {
  workers = [0, 1, 2].map(() => createDb(createPool(t.url, { max: 2 })));
});
afterAll(async () => {
  await Promise.all((workers ?? []).map((w) => w.$client.end()));
});

/** Stand the clock at `at`, then let all three workers evaluate at once. */
async function evaluateAt(at: string) {
  await setClock(t.pool, at);
  const results = await Promise.all(workers.map((w) => evaluateAlerts(w, opts)));
  expect(results.some((r) => r.evaluated)).toBe(true);
  return results;
}

async function events() {
  const { rows } = await t.pool.query<{ rule: string; kind: string; at: Date; details: Record<string, unknown> }>(
    "SELECT rule, kind, at, details FROM alert_events ORDER BY id",
  );
  return rows;
}

describe("evaluateAlerts with three workers", () => {
  it("raises one late alert at the threshold, reminds after the interval and resolves once", async () => {
    await setClock(t.pool, "2030-01-01T09:00:00Z");
    const id = (await makeSchedule(t.db, { name: "report", everySeconds: 300 })).id; // every 300 s: late after 2 × 300 + 30 s grace
    await t.pool.query("INSERT INTO alert_channels (name, kind, config) VALUES ('hook', 'webhook', '{\"url\":\"http://127.0.0.1:9/\"}')");
    await makeRun(t.db, { scheduleId: id, scheduledFor: new Date("2030-01-01T10:00:00Z"), state: "done", startedAt: new Date("2030-01-01T10:00:00Z"), finishedAt: new Date("2030-01-01T10:00:00Z") });

    await evaluateAt("2030-01-01T10:05:00Z");
    await evaluateAt("2030-01-01T10:10:30Z"); // 630 s: at the threshold, not above it
    expect(await events()).toEqual([]);

    await evaluateAt("2030-01-01T10:10:31Z");
    await evaluateAt("2030-01-01T10:10:32Z");
    await evaluateAt("2030-01-01T10:30:00Z"); // still late: no repeat per poll
    let ev = await events();
    expect(ev.map((e) => [e.rule, e.kind])).toEqual([["late", "firing"]]);
    expect(ev[0].at.toISOString()).toBe("2030-01-01T10:10:31.000Z");
    expect(ev[0].details).toMatchObject({ status: "late", sinceLastSuccessSeconds: 631, deadRuns: 0, lateAfterSeconds: 630, url: "http://console.test/schedules/report" });

    await evaluateAt("2030-01-01T11:10:30Z"); // 59:59 after the notification
    expect((await events()).length).toBe(1);
    await evaluateAt("2030-01-01T11:10:31Z");
    await evaluateAt("2030-01-01T11:10:40Z");
    ev = await events();
    expect(ev.map((e) => e.kind)).toEqual(["firing", "reminder"]);
    expect(ev[1].details).toMatchObject({ firingSince: "2030-01-01T10:10:31+00:00", sinceLastSuccessSeconds: 4231 });

    await makeRun(t.db, { scheduleId: id, scheduledFor: new Date("2030-01-01T11:15:00Z"), state: "done", startedAt: new Date("2030-01-01T11:15:00Z"), finishedAt: new Date("2030-01-01T11:15:02Z") });
    await evaluateAt("2030-01-01T11:15:05Z");
    await evaluateAt("2030-01-01T11:16:00Z");
    ev = await events();
    expect(ev.map((e) => e.kind)).toEqual(["firing", "reminder", "resolved"]);
    expect(ev[2].details).toMatchObject({ status: "healthy", sinceLastSuccessSeconds: 3, firingSince: "2030-01-01T10:10:31+00:00" });

    // One delivery per event per enabled channel, queued with the event.
    const d = await t.pool.query("SELECT count(*)::int AS n FROM alert_deliveries WHERE state = 'pending'");
    expect(d.rows[0].n).toBe(3);
  });

  it("fires failing on a dead run and backlogged on an old pending run, once each", async () => {
    await setClock(t.pool, "2030-01-01T09:00:00Z");
    const failing = (await makeSchedule(t.db, { name: "failing", everySeconds: 300 })).id;
    const slow = (await makeSchedule(t.db, { name: "slow", everySeconds: 300, backlogAfterSeconds: 120, lateAfterSeconds: 86_400 })).id;
    await makeRun(t.db, { scheduleId: failing, scheduledFor: new Date("2030-01-01T09:05:00Z"), state: "done", finishedAt: new Date("2030-01-01T09:05:01Z") });
    await makeRun(t.db, { scheduleId: failing, scheduledFor: new Date("2030-01-01T09:10:00Z"), state: "dead", finishedAt: new Date("2030-01-01T09:10:05Z"), attempts: 6 });
    await makeRun(t.db, { scheduleId: slow, scheduledFor: new Date("2030-01-01T09:10:00Z"), state: "pending" });
    // A live worker serves noop: the run waits for a free slot, not for a worker (no unserved alert).
    // Its heartbeat (09:12:05) keeps it live through every evaluation below.
    await setClock(t.pool, "2030-01-01T09:12:05Z");
    await registerWorker(t.db, { id: "w-noop", concurrency: 1, handlers: [{ name: "noop", idempotent: true, description: "" }], version: "t" });

    await evaluateAt("2030-01-01T09:12:00Z"); // slow's pending run is 120 s old: not above
    await evaluateAt("2030-01-01T09:12:01Z");
    await evaluateAt("2030-01-01T09:12:30Z");
    const ev = await t.pool.query("SELECT schedule_name, rule, kind FROM alert_events ORDER BY schedule_name, rule");
    expect(ev.rows).toEqual([
      { schedule_name: "failing", rule: "failing", kind: "firing" },
      { schedule_name: "slow", rule: "backlogged", kind: "firing" },
    ]);
  });

  it("resolves the alerts of a schedule that is paused or deleted, and never fires for them", async () => {
    await setClock(t.pool, "2030-01-01T09:00:00Z");
    const a = (await makeSchedule(t.db, { name: "paused-later", everySeconds: 300 })).id;
    const b = (await makeSchedule(t.db, { name: "deleted-later", everySeconds: 300 })).id;
    await makeSchedule(t.db, { name: "paused-always", everySeconds: 300, enabled: false });
    await evaluateAt("2030-01-01T10:00:00Z"); // both never succeeded in an hour: late
    expect((await events()).map((e) => e.kind)).toEqual(["firing", "firing"]);

    await t.pool.query("UPDATE schedules SET enabled = false WHERE id = $1", [a]);
    await t.pool.query("UPDATE schedules SET deleted_at = sk_now(), name = 'gone' WHERE id = $1", [b]);
    await evaluateAt("2030-01-01T10:01:00Z");
    await evaluateAt("2030-01-01T10:02:00Z");
    const ev = (await events()).map((e) => `${e.kind}:${e.details.status}`);
    expect(ev.sort()).toEqual(["firing:late", "firing:late", "resolved:deleted", "resolved:paused"]);
  });
});

describe("evaluateAlerts in pages", () => {
  it("evaluates every schedule however small the page, with the same events", async () => {
    await setClock(t.pool, "2030-01-01T09:00:00Z");
    const ids: number[] = [];
    for (const name of ["a", "b", "c", "d", "e"]) ids.push((await makeSchedule(t.db, { name: name, everySeconds: 300 })).id);
    for (const id of ids) await makeRun(t.db, { scheduleId: id, scheduledFor: new Date("2030-01-01T10:00:00Z"), state: "done", startedAt: new Date("2030-01-01T10:00:00Z"), finishedAt: new Date("2030-01-01T10:00:00Z") });
    await setClock(t.pool, "2030-01-01T11:00:00Z");
    const r = await evaluateAlerts(workers[0], { ...opts, pageSize: 2 });
    expect(r).toMatchObject({ evaluated: true, firing: 5 });
    const ev = await events();
    expect(ev.map((e) => [e.rule, e.kind])).toEqual(ids.map(() => ["late", "firing"]));
  });
});
