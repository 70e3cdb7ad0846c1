// The operator's cancel (pending run) and discard (dead run) routes, called as Next calls them
// against a real database: the run and its queue row settle together, the audit log says who and
// why, wrong states answer 409, and a schedule whose dead runs are discarded stops failing (its
// failing alert resolves).
import { beforeAll, describe, expect, it } from "vitest";
import { evaluateAlerts } from "@/lib/alerts/evaluate";
import { claimRuns } from "@/lib/runs/claim";
import { findQueueMismatches } from "@/lib/runs/queue-consistency";
import { setClock } from "@/lib/testing/clock";
import { setupTestDatabase } from "@/lib/testing/db";
import { makeRun, makeRuns, makeSchedule } from "@/lib/testing/factories";

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
const t = setupTestDatabase({ poolSize: 4, routes: true, clock: "2030-01-01T12:00:00Z" });
const h: Record<string, Handler> = {};

beforeAll(async () => {
  h.cancel = (await import("./[id]/cancel/route")).POST as Handler;
  h.discard = (await import("./[id]/discard/route")).POST as Handler;
  h.run = (await import("./[id]/route")).GET as Handler;
  h.runs = (await import("./route")).GET as Handler;
  h.schedule = (await import("../schedules/[name]/route")).GET as Handler;
});

type Answer = { status: number; body: { run?: Record<string, unknown>; error?: { code: string; message: string; field?: string } } };
async function act(verb: "cancel" | "discard", id: number | string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const init: RequestInit = { method: "POST", headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers } };
  if (body !== undefined) init.body = typeof body === "string" ? body : JSON.stringify(body);
  const res = await h[verb](new Request(`http://localhost:3000/api/runs/${id}/${verb}`, init), { params: Promise.resolve({ id: String(id) }) });
  return { status: res.status, body: await res.json() };
}

/** The run's record and whether it still has a queue row, read straight from the tables. */
async function tables(id: number) {
  const { rows } = await t.pool.query<{ state: string; skip_reason: string | null; finished_at: Date | null; queued: number }>(
    `SELECT r.state::text, r.skip_reason::text, r.finished_at, (SELECT count(*)::int FROM run_queue q WHERE q.run_id = r.id) AS queued FROM runs r WHERE r.id = $1`,
    [id],
  );
  return rows[0];
}

async function audit(id: number) {
  const { rows } = await t.pool.query<{ action: string; actor: string; actor_kind: string; before: Record<string, unknown>; after: Record<string, unknown> }>(
    "SELECT action, actor, actor_kind, before, after FROM audit_log WHERE target_type = 'run' AND target_id = $1 ORDER BY id",
    [String(id)],
  );
  return rows;
}

const noMismatches = { missing: 0, orphaned: 0, wrongState: 0, duplicated: 0, staleCopies: 0 };

describe("POST /api/runs/{id}/cancel", () => {
  it("settles a pending run as skipped (cancelled), out of the queue, audited with who and why", async () => {
    const s = await makeSchedule(t.db, { name: "report" });
    const [a, b] = await makeRuns(t.db, s.id, [{ scheduledFor: new Date("2030-01-01T13:00:00Z") }, { scheduledFor: new Date("2030-01-01T14:00:00Z") }]);

    const r = await act("cancel", a, { reason: "  customer asked  " });
    expect(r).toEqual({ status: 200, body: { run: { id: a, scheduleId: s.id, state: "skipped", skipReason: "cancelled", reason: "customer asked" } } });
    expect(await tables(a)).toMatchObject({ state: "skipped", skip_reason: "cancelled", queued: 0, finished_at: new Date("2030-01-01T12:00:00Z") });
    expect(await tables(b)).toMatchObject({ state: "pending", queued: 1 });
    expect(await audit(a)).toEqual([
      { action: "run.cancel", actor: "local", actor_kind: "local", before: { state: "pending", attempts: 0, lastError: null }, after: { state: "skipped", skipReason: "cancelled", reason: "customer asked" } },
    ]);
    expect(await findQueueMismatches(t.db)).toEqual(noMismatches);

    // A body-less POST works too; the reason is then null.
    expect((await act("cancel", b)).body.run).toMatchObject({ id: b, skipReason: "cancelled", reason: null });

    // The API shows the reason on the run and in lists.
    const one = await h.run(new Request(`http://localhost:3000/api/runs/${a}`), { params: Promise.resolve({ id: String(a) }) });
    expect(((await one.json()) as { run: Record<string, unknown> }).run).toMatchObject({ id: a, state: "skipped", skipReason: "cancelled" });
    const list = await h.runs(new Request("http://localhost:3000/api/runs?state=skipped"), { params: Promise.resolve({}) });
    const { runs } = (await list.json()) as { runs: { id: number; skipReason: string }[] };
    expect(runs.map((x) => [x.id, x.skipReason])).toEqual([
      [b, "cancelled"],
      [a, "cancelled"],
    ]);

    // No worker claims it afterwards.
    await setClock(t.pool, "2030-01-01T15:00:00Z");
    expect(await claimRuns(t.db, { workerId: "w1", partitions: null, limit: 10 })).toEqual([]);
  });

  it("answers 409 for a run a worker has claimed, a dead or a done one, 404 for none, and changes nothing", async () => {
    const s = await makeSchedule(t.db);
    const [running, dead, done] = await makeRuns(t.db, s.id, [
      { scheduledFor: new Date("2030-01-01T11:00:00Z") },
      { scheduledFor: new Date("2030-01-01T10:00:00Z"), state: "dead", attempts: 6 },
      { scheduledFor: new Date("2030-01-01T09:00:00Z"), state: "done" },
    ]);
    expect((await claimRuns(t.db, { workerId: "w1", partitions: null, limit: 10 })).map((c) => c.id)).toEqual([running]);

    for (const [id, state] of [
      [running, "running"],
      [dead, "dead"],
      [done, "done"],
    ] as const) {
      const r = await act("cancel", id, { reason: "no" });
      expect(r.status).toBe(409);
      expect(r.body.error).toMatchObject({ code: "conflict", field: "id" });
      expect(r.body.error!.message).toContain(`is ${state}`);
    }
    expect(await tables(running)).toMatchObject({ state: "pending", queued: 1 });
    expect(await tables(dead)).toMatchObject({ state: "dead", queued: 1 });
    expect((await act("cancel", 999999)).status).toBe(404);
    expect((await t.pool.query("SELECT count(*)::int AS n FROM audit_log")).rows[0].n).toBe(0);
  });

  it("refuses a bad id or body with 400 naming the field, and writes nothing", async () => {
    const run = (await makeRun(t.db)).id;
    const cases: [unknown, string][] = [
      [{ reason: 5 }, "reason"],
      [{ reason: "   " }, "reason"],
      [{ reason: "x".repeat(501) }, "reason"],
      [{ why: "x" }, "why"],
      [[1], "body"],
      ["{not json", "body"],
    ];
    for (const [body, field] of cases) {
      const r = await act("cancel", run, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error).toMatchObject({ code: "validation", field });
    }
    expect((await act("cancel", "abc")).body.error).toMatchObject({ code: "validation", field: "id" });
    expect((await act("cancel", "1.5")).status).toBe(400);
    expect(await tables(run)).toMatchObject({ state: "pending", queued: 1 });
    expect(await audit(run)).toEqual([]);
  });
});

describe("POST /api/runs/{id}/discard", () => {
  it("discards dead runs (audited); the schedule stops failing and its failing alert resolves", async () => {
    const s = await makeSchedule(t.db, { name: "billing", everySeconds: 300 });
    await t.pool.query("INSERT INTO alert_channels (name, kind, config) VALUES ('hook', 'webhook', '{\"url\":\"http://127.0.0.1:9/\"}')");
    const [d1, d2, pending] = await makeRuns(t.db, s.id, [
      { scheduledFor: new Date("2030-01-01T11:50:00Z"), state: "dead", attempts: 6 },
      { scheduledFor: new Date("2030-01-01T11:55:00Z"), state: "dead", attempts: 6 },
      { scheduledFor: new Date("2030-01-01T12:05:00Z") },
    ]);
    const health = async () => {
      const res = await h.schedule(new Request("http://localhost:3000/api/schedules/billing"), { params: Promise.resolve({ name: "billing" }) });
      return ((await res.json()) as { schedule: { status: string; deadRuns: number } }).schedule;
    };
    const opts = { publicUrl: "http://console.test", reminderSeconds: 0 };
    const events = async () => (await t.pool.query<{ rule: string; kind: string }>("SELECT rule, kind FROM alert_events ORDER BY id")).rows.map((e) => [e.rule, e.kind]);

    expect(await health()).toMatchObject({ status: "failing", deadRuns: 2 });
    await evaluateAlerts(t.db, opts);
    expect(await events()).toEqual([["failing", "firing"]]);

    expect((await act("discard", pending)).status).toBe(409);
    const first = await act("discard", d1, { reason: "bad input, fixed upstream" });
    expect(first.body.run).toEqual({ id: d1, scheduleId: s.id, state: "skipped", skipReason: "discarded", reason: "bad input, fixed upstream" });
    expect(await tables(d1)).toMatchObject({ state: "skipped", skip_reason: "discarded", queued: 0 });
    expect(await health()).toMatchObject({ status: "failing", deadRuns: 1 });
    await evaluateAlerts(t.db, opts);
    expect(await events()).toEqual([["failing", "firing"]]);

    expect((await act("discard", d2)).status).toBe(200);
    expect((await health()).deadRuns).toBe(0);
    expect((await health()).status).not.toBe("failing");
    await evaluateAlerts(t.db, opts);
    expect(await events()).toEqual([
      ["failing", "firing"],
      ["failing", "resolved"],
    ]);
    expect((await audit(d1)).map((e) => [e.action, e.actor, e.before.state, e.after.reason])).toEqual([["run.discard", "local", "dead", "bad input, fixed upstream"]]);
    expect(await findQueueMismatches(t.db)).toEqual(noMismatches);

    // Discarded once is settled: again is a conflict, and so is re-queueing it.
    expect((await act("discard", d1)).body.error).toMatchObject({ code: "conflict" });
    const requeue = (await import("./[id]/requeue/route")).POST as Handler;
    expect((await requeue(new Request(`http://localhost:3000/api/runs/${d1}/requeue`, { method: "POST" }), { params: Promise.resolve({ id: String(d1) }) })).status).toBe(409);
  });

  it("answers 404 for an unknown run and 400 for an unknown field", async () => {
    expect((await act("discard", 424242, { reason: "x" })).body.error).toMatchObject({ code: "not_found" });
    const dead = (await makeRun(t.db, { state: "dead", attempts: 3 })).id;
    expect((await act("discard", dead, { reason: "x", force: true })).body.error).toMatchObject({ code: "validation", field: "force" });
    expect(await tables(dead)).toMatchObject({ state: "dead", queued: 1 });
  });
});
