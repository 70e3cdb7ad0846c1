// Run now with a payload, through the route as Next calls it, on a real database: the claimed run
// carries the payload the test sent (not the schedule's), the schedule and its other runs keep
// theirs, an edit of the schedule while the run waits keeps the run's payload and takes the edited
// retry policy, the schedule's cadence (its next slot, its pending scheduled runs, the slots the
// next tick writes) is left alone, and a payload the handler refuses is a 400 naming the field
// with no run written.
import { beforeAll, describe, expect, it } from "vitest";
import { claimRuns } from "@/lib/runs/claim";
import { tickOnce } from "@/lib/runs/tick";
import { advanceClock } from "@/lib/testing/clock";
import { findQueueMismatches } from "@/lib/runs/queue-consistency";
import { setupTestDatabase } from "@/lib/testing/db";
import { makeRun, makeSchedule } from "@/lib/testing/factories";

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
const t = setupTestDatabase({ poolSize: 4, routes: true, clock: "2030-01-01T12:00:00Z" });
const h: Record<string, Handler> = {};

beforeAll(async () => {
  h.runNow = (await import("./[name]/run-now/route")).POST as Handler;
  h.edit = (await import("./[name]/route")).PATCH as Handler;
  h.run = (await import("../runs/[id]/route")).GET as Handler;
});

async function runNow(name: string, body?: unknown) {
  const init: RequestInit = { method: "POST", headers: body === undefined ? {} : { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) };
  const res = await h.runNow(new Request(`http://localhost:3000/api/schedules/${name}/run-now`, init), { params: Promise.resolve({ name }) });
  return { status: res.status, body: (await res.json()) as { run?: { id: number }; error?: { field?: string; message: string } } };
}

const noMismatches = { missing: 0, orphaned: 0, wrongState: 0, duplicated: 0, staleCopies: 0 };
const runCount = async () => Number((await t.pool.query<{ n: string }>("SELECT count(*) AS n FROM runs")).rows[0].n);

describe("POST /api/schedules/{name}/run-now with a payload", () => {
  it("hands this run the payload sent, leaves the schedule's own runs and payload alone, and keeps it through an edit", async () => {
    const s = await makeSchedule(t.db, { name: "report", handler: "noop", payload: { region: "eu", full: false } });
    const slot = await makeRun(t.db, { scheduleId: s.id, scheduledFor: new Date("2030-01-01T11:00:00Z") });
    const sent = { region: "us", full: true, note: "rerun for the audit" };
    const r = await runNow("report", { payload: sent });
    expect(r.status).toBe(200);
    const manual = r.body.run!.id;

    // An edit while it waits: the retry policy reaches the manual run, its payload stays.
    const version = (await t.pool.query<{ version: number }>("SELECT version FROM schedules WHERE id = $1", [s.id])).rows[0].version;
    const edited = await h.edit(new Request("http://localhost:3000/api/schedules/report", { method: "PATCH", headers: { "content-type": "application/json" }, body: JSON.stringify({ retry: { maxAttempts: 7, baseSeconds: 2, capSeconds: 60 }, version }) }), { params: Promise.resolve({ name: "report" }) });
    expect(edited.status).toBe(200);
    expect(await findQueueMismatches(t.db)).toEqual(noMismatches);

    const claimed = await claimRuns(t.db, { workerId: "w1", partitions: null, limit: 10 });
    const byId = new Map(claimed.map((c) => [c.id, c]));
    expect(byId.get(manual)?.payload).toEqual(sent);
    expect(byId.get(manual)?.retry).toEqual({ maxAttempts: 7, baseSeconds: 2, capSeconds: 60 });
    expect(byId.get(slot.id)?.payload).toEqual({ region: "eu", full: false });
    expect((await t.pool.query("SELECT payload FROM schedules WHERE id = $1", [s.id])).rows[0].payload).toEqual({ region: "eu", full: false });

    // The run's page shows what it ran with; the audit entry records it.
    const detail = (await (await h.run(new Request(`http://localhost:3000/api/runs/${manual}`), { params: Promise.resolve({ id: String(manual) }) })).json()) as { run: { payloadOverride: unknown } };
    expect(detail.run.payloadOverride).toEqual(sent);
    const audit = await t.pool.query("SELECT after->'payload' AS payload FROM audit_log WHERE action = 'schedule.run_now' AND target_id = $1", [String(manual)]);
    expect(audit.rows).toEqual([{ payload: sent }]);

    // Without a body, a manual run uses the schedule's payload.
    const plain = (await runNow("report")).body.run!.id;
    const second = await claimRuns(t.db, { workerId: "w1", partitions: null, limit: 10 });
    expect(second.find((c) => c.id === plain)?.payload).toEqual({ region: "eu", full: false });
  });

  it("leaves the cadence alone: the next slot and the pending scheduled runs are unchanged, and the next tick writes the cadence's slots", async () => {
    const s = await makeSchedule(t.db, { name: "every-5m", everySeconds: 300, payload: { region: "eu" } });
    const tick = () => tickOnce(t.db, { partitions: null, horizonSeconds: 600, graceSeconds: 60 });
    await tick();
    const cadence = async () => ({
      nextSlotAt: (await t.pool.query<{ at: Date }>("SELECT next_slot_at AS at FROM schedules WHERE id = $1", [s.id])).rows[0].at.toISOString(),
      scheduled: (
        await t.pool.query<{ id: number; scheduled_for: Date; due_at: Date; run_after: Date; state: string; payload_override: unknown }>(
          "SELECT id, scheduled_for, due_at, run_after, state::text, payload_override FROM runs WHERE schedule_id = $1 AND origin <> 'manual' ORDER BY scheduled_for",
          [s.id],
        )
      ).rows,
    });
    const before = await cadence();
    // The clock stands at 12:00:00; slots every 5 minutes up to the 10-minute horizon.
    expect(before.scheduled.map((r) => [r.scheduled_for.toISOString(), r.state, r.payload_override])).toEqual([
      ["2030-01-01T12:00:00.000Z", "pending", null],
      ["2030-01-01T12:05:00.000Z", "pending", null],
      ["2030-01-01T12:10:00.000Z", "pending", null],
    ]);
    expect(before.nextSlotAt).toBe("2030-01-01T12:15:00.000Z");

    await advanceClock(t.pool, 2 * 60_000);
    const r = await runNow("every-5m", { payload: { region: "us" } });
    expect(r.status).toBe(200);
    expect(await cadence()).toEqual(before);
    const manual = await t.pool.query("SELECT scheduled_for, origin::text, payload_override FROM runs WHERE schedule_id = $1 AND origin = 'manual'", [s.id]);
    expect(manual.rows).toEqual([{ scheduled_for: new Date("2030-01-01T12:02:00Z"), origin: "manual", payload_override: { region: "us" } }]);

    // Ten minutes on (the unclaimed slots by now missed, as catch-up decides), the tick carries on
    // from 12:15 on the same 5-minute grid: no slot moved, none added for the manual run.
    await advanceClock(t.pool, 10 * 60_000);
    await tick();
    const after = await cadence();
    expect(after.scheduled.map((x) => [x.id, x.scheduled_for.toISOString()])).toEqual([
      ...before.scheduled.map((x) => [x.id, x.scheduled_for.toISOString()]),
      [expect.any(Number), "2030-01-01T12:15:00.000Z"],
      [expect.any(Number), "2030-01-01T12:20:00.000Z"],
    ]);
    expect(after.nextSlotAt).toBe("2030-01-01T12:25:00.000Z");
  });

  it("refuses a payload the handler could never run, naming the field, and writes no run", async () => {
    await makeSchedule(t.db, { name: "backup", handler: "command", payload: { command: "/usr/bin/true" } });
    const before = await runCount();
    for (const [body, field] of [
      [{ payload: { command: "/usr/bin/true", args: "not-a-list" } }, "payload.args"],
      [{ payload: [1, 2] }, "payload"],
      [{ payload: { command: "/usr/bin/true", env: { TOKEN: "••••••••" } } }, "payload"],
      [{ payload: {}, extra: 1 }, "extra"],
    ] as const) {
      const r = await runNow("backup", body);
      expect({ status: r.status, field: r.body.error?.field }, JSON.stringify(body)).toEqual({ status: 400, field });
    }
    expect(await runCount()).toBe(before);
  });
});
