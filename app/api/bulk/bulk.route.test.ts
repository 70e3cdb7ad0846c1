// Bulk actions by filter, called as Next calls the routes, against a real database: the server
// finds every match (far more than a console page holds), a dry run counts without writing, the
// real call moves each match and audits each one, things outside the filter are left alone, and
// bad bodies get a 400 naming the field with nothing written. Checked against the tables.
import { beforeAll, describe, expect, it } from "vitest";
import { setupTestDatabase } from "@/lib/testing/db";
import { makeRuns, makeSchedule } from "@/lib/testing/factories";

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
const t = setupTestDatabase({ poolSize: 4, routes: true, clock: "2030-01-01T12:00:00Z" });
const h: Record<string, Handler> = {};

beforeAll(async () => {
  h.schedules = (await import("./schedules/route")).POST as Handler;
  h.runs = (await import("./runs/route")).POST as Handler;
});

async function post(route: "schedules" | "runs", body: unknown): Promise<{ status: number; body: Record<string, unknown> & { error?: { field?: string; message: string } } }> {
  const res = await h[route](new Request(`http://localhost:3000/api/bulk/${route}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }), { params: Promise.resolve({}) });
  return { status: res.status, body: await res.json() };
}

const q = async <T>(text: string, values: unknown[] = []) => (await t.pool.query(text, values)).rows as T[];
const auditCount = async (action: string) => (await q<{ n: number }>("SELECT count(*)::int AS n FROM audit_log WHERE action = $1", [action]))[0].n;

describe("POST /api/bulk/runs", () => {
  it("re-queues every dead run of a schedule in a slot window, beyond any page, and only those", async () => {
    const a = await makeSchedule(t.db, { name: "bulk-a" });
    const b = await makeSchedule(t.db, { name: "bulk-b" });
    // 1,250 dead runs of a, one per minute from 00:00, and 10 of b: more than one batch, more than a page.
    const slot = (i: number) => new Date(Date.UTC(2029, 11, 31, 0, i));
    await makeRuns(t.db, a.id, Array.from({ length: 1250 }, (_, i) => ({ scheduledFor: slot(i), state: "dead" as const, attempts: 3 })));
    await makeRuns(t.db, b.id, Array.from({ length: 10 }, (_, i) => ({ scheduledFor: slot(i), state: "dead" as const, attempts: 3 })));
    const window = { schedule: "bulk-a", from: slot(100).toISOString(), to: slot(1200).toISOString() };

    const dry = await post("runs", { action: "requeue", filter: window, dryRun: true });
    expect(dry).toEqual({ status: 200, body: { action: "requeue", dryRun: true, matched: 1100, changed: 0, remaining: 0 } });
    expect((await q<{ n: number }>("SELECT count(*)::int AS n FROM runs WHERE state = 'dead'"))[0].n).toBe(1260);

    const done = await post("runs", { action: "requeue", filter: window });
    expect(done.body).toMatchObject({ matched: 1100, changed: 1100 });
    const states = await q<{ schedule_id: number; in_window: boolean; state: string; n: number }>(
      `SELECT schedule_id, scheduled_for >= $1 AND scheduled_for < $2 AS in_window, state::text, count(*)::int AS n FROM runs GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`,
      [slot(100), slot(1200)],
    );
    expect(states).toEqual([
      { schedule_id: a.id, in_window: false, state: "dead", n: 150 },
      { schedule_id: a.id, in_window: true, state: "pending", n: 1100 },
      { schedule_id: b.id, in_window: false, state: "dead", n: 10 },
    ]);
    expect((await q<{ n: number }>("SELECT count(*)::int AS n FROM run_queue WHERE state = 'pending' AND schedule_id = $1", [a.id]))[0].n).toBe(1100);
    expect(await auditCount("run.requeue")).toBe(1100);
  });

  it("discards every dead run matching, with the reason on each audit entry", async () => {
    const c = await makeSchedule(t.db, { name: "bulk-c" });
    await makeRuns(t.db, c.id, Array.from({ length: 30 }, (_, i) => ({ scheduledFor: new Date(Date.UTC(2029, 11, 30, 0, i)), state: "dead" as const, attempts: 1 })));
    const r = await post("runs", { action: "discard", filter: { schedule: "bulk-c" }, reason: "vendor bug" });
    expect(r.body).toMatchObject({ matched: 30, changed: 30 });
    expect(await q("SELECT state::text, count(*)::int AS n FROM runs WHERE schedule_id = $1 GROUP BY 1", [c.id])).toEqual([{ state: "skipped", n: 30 }]);
    expect(await q("SELECT count(*)::int AS n FROM run_queue WHERE schedule_id = $1", [c.id])).toEqual([{ n: 0 }]);
    expect(await q("SELECT DISTINCT after->>'reason' AS reason FROM audit_log WHERE action = 'run.discard'")).toEqual([{ reason: "vendor bug" }]);
  });

  it("refuses a bad body with the field named, and moves nothing", async () => {
    const before = await q("SELECT id, state::text FROM runs ORDER BY id");
    for (const [body, field] of [
      [{ action: "delete", filter: {} }, "action"],
      [{ action: "requeue" }, "filter"],
      [{ action: "requeue", filter: { from: "yesterday" } }, "filter.from"],
      [{ action: "requeue", filter: { state: "done" } }, "filter.state"],
      [{ action: "requeue", filter: {}, reason: "x" }, "reason"],
      [{ action: "requeue", filter: { from: "2030-01-02T00:00:00Z", to: "2030-01-01T00:00:00Z" } }, "filter.from"],
    ] as const) {
      const r = await post("runs", body);
      expect({ status: r.status, field: r.body.error?.field }, JSON.stringify(body)).toEqual({ status: 400, field });
    }
    expect(await q("SELECT id, state::text FROM runs ORDER BY id")).toEqual(before);
  });
});

describe("POST /api/bulk/schedules", () => {
  it("pauses every schedule with a tag, with the note, and resumes them again", async () => {
    for (let i = 0; i < 620; i++) await makeSchedule(t.db, { name: `tagged-${String(i).padStart(3, "0")}`, tags: ["nightly"] });
    await makeSchedule(t.db, { name: "untagged", tags: [] });
    const dry = await post("schedules", { action: "pause", filter: { tag: "nightly" }, dryRun: true });
    expect(dry.body).toMatchObject({ matched: 620, dryRun: true });
    expect(await q("SELECT count(*)::int AS n FROM schedules WHERE NOT enabled")).toEqual([{ n: 0 }]);

    const paused = await post("schedules", { action: "pause", filter: { tag: "nightly" }, note: "maintenance" });
    expect(paused.body).toMatchObject({ matched: 620 });
    expect((paused.body.changed as string[]).length).toBe(620);
    expect(await q("SELECT enabled, paused_note, count(*)::int AS n FROM schedules WHERE name LIKE 'tagged-%' OR name = 'untagged' GROUP BY 1, 2 ORDER BY 1")).toEqual([
      { enabled: false, paused_note: "maintenance", n: 620 },
      { enabled: true, paused_note: null, n: 1 },
    ]);
    expect(await auditCount("schedule.pause")).toBe(620);

    // Resume by status: paused is a health status; the untagged enabled one is not matched.
    const resumed = await post("schedules", { action: "resume", filter: { status: "paused", search: "tagged-0" } });
    expect(resumed.body).toMatchObject({ matched: 100 });
    expect(await q("SELECT count(*)::int AS n FROM schedules WHERE enabled AND name LIKE 'tagged-0%'")).toEqual([{ n: 100 }]);
    expect(await q("SELECT count(*)::int AS n FROM schedules WHERE NOT enabled")).toEqual([{ n: 520 }]);
  });

  it("refuses a bad body with the field named", async () => {
    for (const [body, field] of [
      [{ action: "pause", filter: { status: "sleepy" } }, "filter.status"],
      [{ action: "resume", filter: {}, note: "x" }, "note"],
      [{ action: "pause", filter: { colour: "red" } }, "filter.colour"],
      [{ action: "pause", filter: {}, extra: 1 }, "extra"],
    ] as const) {
      const r = await post("schedules", body);
      expect({ status: r.status, field: r.body.error?.field }, JSON.stringify(body)).toEqual({ status: 400, field });
    }
  });
});
