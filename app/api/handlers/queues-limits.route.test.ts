// Queues and concurrency limits through the API: a schedule's queue and maxConcurrent stored and
// shown as given, edited and cleared, in the export; a handler's fleet-wide limit set, shown and
// removed; bad input refused naming the field, with nothing written (the rows read back in SQL).
import { beforeAll, describe, expect, it } from "vitest";
import { setupTestDatabase } from "@/lib/testing/db";

const t = setupTestDatabase({ routes: true });
type Handler = (req: Request, ctx: { params: Promise<{ name: string }> }) => Promise<Response>;
type RouteModule = Partial<Record<"GET" | "POST" | "PATCH" | "PUT", Handler>>;
const mods: Record<string, RouteModule> = {};

beforeAll(async () => {
  mods.schedules = (await import("../schedules/route")) as unknown as RouteModule;
  mods.schedule = (await import("../schedules/[name]/route")) as unknown as RouteModule;
  mods.handlers = (await import("./route")) as unknown as RouteModule;
  mods.limit = (await import("./[name]/limit/route")) as unknown as RouteModule;
  mods.export = (await import("../export/route")) as unknown as RouteModule;
});

async function call(mod: RouteModule, method: "GET" | "POST" | "PATCH" | "PUT", path: string, body?: unknown, name = "") {
  const init: RequestInit = { method, headers: { "content-type": "application/json", origin: "http://127.0.0.1" } };
  if (body !== undefined) init.body = JSON.stringify(body);
  const res = await mod[method]!(new Request(`http://127.0.0.1${path}`, init), { params: Promise.resolve({ name: encodeURIComponent(name) }) });
  return { status: res.status, body: await res.json() };
}

const stored = async () => (await t.pool.query("SELECT name, queue, max_concurrent FROM schedules ORDER BY name")).rows;

describe("a schedule's queue and maxConcurrent", () => {
  it("defaults to the default queue and no limit, keeps what was given, edits and clears it, and exports it", async () => {
    const plain = await call(mods.schedules, "POST", "/api/schedules", { name: "plain", handler: "noop", everySeconds: 60 });
    expect(plain.status).toBe(201);
    expect(plain.body.schedule).toMatchObject({ queue: "default", maxConcurrent: null });
    const r = await call(mods.schedules, "POST", "/api/schedules", { name: "report", handler: "noop", everySeconds: 60, queue: "reports", maxConcurrent: 2 });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.schedule).toMatchObject({ queue: "reports", maxConcurrent: 2 });
    expect(await stored()).toEqual([
      { name: "plain", queue: "default", max_concurrent: null },
      { name: "report", queue: "reports", max_concurrent: 2 },
    ]);
    const got = await call(mods.schedule, "GET", "/api/schedules/report", undefined, "report");
    expect(got.body.schedule).toMatchObject({ queue: "reports", maxConcurrent: 2 });

    const edit = await call(mods.schedule, "PATCH", "/api/schedules/report", { version: got.body.schedule.version, queue: "etl.v2", maxConcurrent: null }, "report");
    expect(edit.status, JSON.stringify(edit.body)).toBe(200);
    expect(edit.body.schedule).toMatchObject({ queue: "etl.v2", maxConcurrent: null });

    const doc = await call(mods.export, "GET", "/api/export");
    expect(doc.body.schedules.map((s: { name: string; queue: string; maxConcurrent: number | null }) => [s.name, s.queue, s.maxConcurrent])).toEqual([
      ["plain", "default", null],
      ["report", "etl.v2", null],
    ]);
  });

  it("refuses a bad queue or maxConcurrent with 400 naming the field, and writes nothing", async () => {
    const base = { name: "bad", handler: "noop", everySeconds: 60 };
    const cases: [Record<string, unknown>, string][] = [
      [{ queue: "" }, "queue"],
      [{ queue: "has space" }, "queue"],
      [{ queue: "x".repeat(65) }, "queue"],
      [{ queue: 7 }, "queue"],
      [{ maxConcurrent: 0 }, "maxConcurrent"],
      [{ maxConcurrent: 1.5 }, "maxConcurrent"],
      [{ maxConcurrent: "3" }, "maxConcurrent"],
      [{ maxConcurrent: 10_001 }, "maxConcurrent"],
      [{ overlap: "forbid", maxConcurrent: 2 }, "maxConcurrent"],
    ];
    for (const [extra, field] of cases) {
      const r = await call(mods.schedules, "POST", "/api/schedules", { ...base, ...extra });
      expect(r.status, JSON.stringify(extra)).toBe(400);
      expect(r.body.error.field, JSON.stringify(extra)).toBe(field);
    }
    expect(await stored()).toEqual([]);

    // An edit is checked against the stored schedule: forbid on top of maxConcurrent 3 is refused.
    const made = await call(mods.schedules, "POST", "/api/schedules", { ...base, maxConcurrent: 3 });
    const r = await call(mods.schedule, "PATCH", "/api/schedules/bad", { version: made.body.schedule.version, overlap: "forbid" }, "bad");
    expect(r.status).toBe(400);
    expect(r.body.error.field).toBe("maxConcurrent");
    expect((await t.pool.query("SELECT overlap, max_concurrent, version FROM schedules")).rows).toEqual([{ overlap: "allow", max_concurrent: 3, version: 1 }]);
  });
});

describe("a handler's fleet-wide limit", () => {
  it("is set, shown on GET /api/handlers, audited and removed; bad input is refused naming the field", async () => {
    const set = await call(mods.limit, "PUT", "/api/handlers/http/limit", { maxConcurrent: 5 }, "http");
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body).toEqual({ handler: "http", maxConcurrent: 5 });
    expect((await t.pool.query("SELECT handler, max_concurrent FROM handler_limits")).rows).toEqual([{ handler: "http", max_concurrent: 5 }]);
    const listed = await call(mods.handlers, "GET", "/api/handlers");
    const byName = Object.fromEntries(listed.body.handlers.map((h: { name: string; maxConcurrent: number | null }) => [h.name, h.maxConcurrent]));
    expect(byName).toMatchObject({ http: 5, noop: null });

    for (const [body, field] of [
      [{ maxConcurrent: 0 }, "maxConcurrent"],
      [{ maxConcurrent: "5" }, "maxConcurrent"],
      [{}, "maxConcurrent"],
      [{ maxConcurrent: 2, extra: 1 }, "extra"],
      [[], "body"],
    ] as const) {
      const r = await call(mods.limit, "PUT", "/api/handlers/http/limit", body, "http");
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.field, JSON.stringify(body)).toBe(field);
    }
    expect((await t.pool.query("SELECT max_concurrent FROM handler_limits")).rows).toEqual([{ max_concurrent: 5 }]);

    const cleared = await call(mods.limit, "PUT", "/api/handlers/http/limit", { maxConcurrent: null }, "http");
    expect(cleared.body).toEqual({ handler: "http", maxConcurrent: null });
    expect((await t.pool.query("SELECT count(*)::int AS n FROM handler_limits")).rows[0].n).toBe(0);
    const audit = await t.pool.query("SELECT target_id, before, after FROM audit_log WHERE action = 'handler.limit' ORDER BY id");
    expect(audit.rows).toEqual([
      { target_id: "http", before: { maxConcurrent: null }, after: { maxConcurrent: 5 } },
      { target_id: "http", before: { maxConcurrent: 5 }, after: { maxConcurrent: null } },
    ]);
  });
});
