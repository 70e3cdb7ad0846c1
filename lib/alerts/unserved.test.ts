import { describe, expect, it } from "vitest";
import { getScheduleHealth } from "../health/schedule-health";
import { setClock } from "../testing/clock";
import { setupTestDatabase } from "../testing/db";
import { makeRuns, makeSchedule, RUNS_BY_HAND } from "../testing/factories";
import { registerWorker } from "../workers/registry";
import { evaluateAlerts } from "./evaluate";

// The unserved rule, with the database clock moved: a due run of a handler no live worker serves,
// waiting longer than the schedule's stated worst-case lateness, fires; a worker serving it resolves it.
const t = setupTestDatabase();
const opts = { publicUrl: "http://console.test", reminderSeconds: 3600 };
const events = async () => (await t.pool.query<{ rule: string; kind: string; details: Record<string, unknown> }>("SELECT rule, kind, details FROM alert_events ORDER BY id")).rows;
const info = (name: string) => ({ name, idempotent: true, description: name });

describe("the unserved alert rule", () => {
  it("fires after the stated worst-case lateness without a live worker serving the handler, and resolves when one registers", async () => {
    await setClock(t.pool, "2030-01-01T10:00:00Z");
    await registerWorker(t.db, { id: "w-alpha", concurrency: 1, handlers: [info("alpha")], version: "t" });
    // Worst-case lateness: jitter 0 + 2 × 1 s poll + max(lease 10, 4) = 12 s.
    const s = (await makeSchedule(t.db, { ...RUNS_BY_HAND, enabled: true, name: "gamma-job", handler: "gamma", leaseSeconds: 10, jitterSeconds: 0 })).id;
    await makeRuns(t.db, s, [{ scheduledFor: new Date("2030-01-01T10:00:00Z") }]);

    const health = (await getScheduleHealth(t.db, [s])).get(s)!;
    expect(health.unservedHandler).toEqual({ handler: "gamma", since: "2030-01-01T10:00:00.000Z" });
    await setClock(t.pool, "2030-01-01T10:00:12Z");
    await evaluateAlerts(t.db, opts);
    expect(await events()).toEqual([]);
    await setClock(t.pool, "2030-01-01T10:00:13Z");
    await evaluateAlerts(t.db, opts);
    let ev = await events();
    expect(ev.map((e) => [e.rule, e.kind])).toEqual([["unserved", "firing"]]);
    expect(ev[0].details).toMatchObject({ unservedHandler: { handler: "gamma", since: "2030-01-01T10:00:00.000Z" }, unservedAfterSeconds: 12 });

    await registerWorker(t.db, { id: "w-gamma", concurrency: 1, handlers: [info("gamma")], version: "t" });
    expect((await getScheduleHealth(t.db, [s])).get(s)!.unservedHandler).toBeNull();
    await setClock(t.pool, "2030-01-01T10:00:14Z");
    await evaluateAlerts(t.db, opts);
    ev = await events();
    expect(ev.map((e) => [e.rule, e.kind])).toEqual([["unserved", "firing"], ["unserved", "resolved"]]);
  });
});
