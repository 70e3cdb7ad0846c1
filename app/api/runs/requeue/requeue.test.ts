// The re-queue and handlers routes, called as Next calls them against a real database.
import { beforeAll, describe, expect, it } from "vitest";
import { setupTestDatabase } from "@/lib/testing/db";
import { makeRuns, makeSchedule } from "@/lib/testing/factories";
import { readRun } from "@/lib/testing/runs";

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
const t = setupTestDatabase({ poolSize: 4, routes: true });
let requeueOne: Handler;
let requeueMany: Handler;
let listHandlers: Handler;

const post = (url: string, body?: unknown) =>
  new Request(`http://localhost:3000${url}`, { method: "POST", headers: { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });

beforeAll(async () => {
  requeueOne = (await import("../[id]/requeue/route")).POST as Handler;
  requeueMany = (await import("./route")).POST as Handler;
  listHandlers = (await import("../../handlers/route")).GET as Handler;
});

describe("POST /api/runs/{id}/requeue", () => {
  it("re-queues a dead run (audited), 409 for a run that is not dead, 404 for an unknown one", async () => {
    const s = (await makeSchedule(t.db, { retryMaxAttempts: 3 })).id;
    const [dead, pending] = await makeRuns(t.db, s, [
      { scheduledFor: new Date("2030-01-01T10:00:00Z"), state: "dead", attempts: 3 },
      { scheduledFor: new Date("2030-01-01T11:00:00Z") },
    ]);
    const ok = await requeueOne(post(`/api/runs/${dead}/requeue`), { params: Promise.resolve({ id: String(dead) }) });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ requeued: dead });
    expect(await readRun(t.pool, dead)).toMatchObject({ state: "pending", attempts: 3, max_attempts: 6 });
    const { rows } = await t.pool.query("SELECT action, actor FROM audit_log WHERE target_id = $1", [String(dead)]);
    expect(rows).toHaveLength(1);
    expect(rows[0].action).toBe("run.requeue");

    const conflict = await requeueOne(post(`/api/runs/${pending}/requeue`), { params: Promise.resolve({ id: String(pending) }) });
    expect(conflict.status).toBe(409);
    expect(((await conflict.json()) as { error: { code: string } }).error.code).toBe("conflict");
    const missing = await requeueOne(post("/api/runs/999999/requeue"), { params: Promise.resolve({ id: "999999" }) });
    expect(missing.status).toBe(404);
    const bad = await requeueOne(post("/api/runs/abc/requeue"), { params: Promise.resolve({ id: "abc" }) });
    expect(bad.status).toBe(400);
  });
});

describe("POST /api/runs/requeue", () => {
  it("re-queues the dead runs of a selection and reports the rest", async () => {
    const s = (await makeSchedule(t.db)).id;
    const [a, b, c] = await makeRuns(t.db, s, [0, 1, 2].map((i) => ({ scheduledFor: new Date(Date.UTC(2031, 0, 1, i)), state: i < 2 ? "dead" : "done", attempts: 1 })));
    const res = await requeueMany(post("/api/runs/requeue", { ids: [a, b, c] }), { params: Promise.resolve({}) });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ requeued: [a, b], notDead: [c], missing: [] });
    const invalid = await requeueMany(post("/api/runs/requeue", { ids: [] }), { params: Promise.resolve({}) });
    expect(invalid.status).toBe(400);
  });
});

describe("GET /api/handlers", () => {
  it("lists built-ins and registered handlers, warning on non-idempotent ones", async () => {
    await t.pool.query(
      `INSERT INTO workers (id, hostname, pid, concurrency, handlers) VALUES ('w', 'h', 1, 1, $1::jsonb)`,
      [JSON.stringify([{ name: "charge-cards", idempotent: false, description: "Charges the monthly fee." }])],
    );
    const res = await listHandlers(new Request("http://localhost:3000/api/handlers"), { params: Promise.resolve({}) });
    expect(res.status).toBe(200);
    const { handlers } = (await res.json()) as { handlers: { name: string; idempotent: boolean; warning?: string }[] };
    expect(handlers.map((h) => h.name)).toEqual(expect.arrayContaining(["noop", "sleep", "http", "sql-ledger", "fail", "charge-cards"]));
    expect(handlers.find((h) => h.name === "charge-cards")).toMatchObject({ idempotent: false, warning: "this job may run twice" });
    expect(handlers.find((h) => h.name === "noop")!.warning).toBeUndefined();
  });
});
