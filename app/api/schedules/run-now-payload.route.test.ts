// Run now with a payload, through the route as Next calls it, on a real database: the claimed run
// carries the payload the test sent (not the schedule's), the schedule and its other runs keep
// theirs, an edit of the schedule while the run waits keeps the run's payload and takes the edited
// retry policy, and a payload the handler refuses is a 400 naming the field with no run written.
import { beforeAll, describe, expect, it } from "vitest";
import { claimRuns } from "@/lib/runs/claim";
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
