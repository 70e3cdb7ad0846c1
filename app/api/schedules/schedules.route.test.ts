// The schedule API end to end through its route handlers, against a real database whose clock the
// test moves: create/read/list, optimistic edits, pause/resume with catch-up, run now, backfill, delete.
import { beforeAll, describe, expect, it } from "vitest";
import { tickOnce } from "@/lib/runs/tick";
import { setClock } from "@/lib/testing/clock";
import { setupTestDatabase } from "@/lib/testing/db";

const t = setupTestDatabase({ routes: true, reset: false });
type Handler = (req: Request, ctx: { params: Promise<{ name: string }> }) => Promise<Response>;
type RouteModule = Partial<Record<"GET" | "POST" | "PATCH" | "DELETE", Handler>>;
const mods: Record<string, RouteModule> = {};

beforeAll(async () => {
  mods.list = (await import("./route")) as unknown as RouteModule;
  mods.one = (await import("./[name]/route")) as unknown as RouteModule;
  mods.pause = (await import("./[name]/pause/route")) as unknown as RouteModule;
  mods.resume = (await import("./[name]/resume/route")) as unknown as RouteModule;
  mods["run-now"] = (await import("./[name]/run-now/route")) as unknown as RouteModule;
  mods.backfill = (await import("./[name]/backfill/route")) as unknown as RouteModule;
});

async function call(method: "GET" | "POST" | "PATCH" | "DELETE", mod: string, name: string | null, opts: { body?: unknown; query?: string } = {}) {
  const path = `/api/schedules${name === null ? "" : `/${encodeURIComponent(name)}`}${mod === "list" || mod === "one" ? "" : `/${mod}`}${opts.query ?? ""}`;
  const init: RequestInit = { method, headers: { "content-type": "application/json", origin: "http://127.0.0.1" } };
  if (opts.body !== undefined) init.body = JSON.stringify(opts.body);
  const res = await mods[mod][method]!(new Request(`http://127.0.0.1${path}`, init), { params: Promise.resolve({ name: name === null ? "" : encodeURIComponent(name) }) });
  return { status: res.status, body: await res.json() };
}

const q = async <T = Record<string, unknown>>(text: string, values: unknown[] = []) => (await t.pool.query(text, values)).rows as T[];
const at = (s: string) => new Date(`2024-03-01T${s}Z`);
const tick = () => tickOnce(t.db, { partitions: null, horizonSeconds: 120, graceSeconds: 30 });

describe("schedules API", () => {
  // Stated worst-case lateness: jitter 5 + 2 × the 1 s poll + max(lease 30, 4) = 37 s.
  it("creates a schedule (201) with its partition, first slot and stated worst-case lateness", async () => {
    await setClock(t.pool, at("10:00:10"));
    const r = await call("POST", "list", null, { body: { name: "nightly report", handler: "noop", everySeconds: 300, jitterSeconds: 5, leaseSeconds: 30 } });
    expect(r.status).toBe(201);
    expect(r.body.schedule).toMatchObject({ name: "nightly report", everySeconds: 300, timezone: "UTC", catchUp: "latest", version: 1, nextSlotAt: "2024-03-01T10:05:00.000Z", worstCaseLatenessSeconds: 37, databaseOutageAllowanceSeconds: 30, retry: { maxAttempts: 6, baseSeconds: 30, capSeconds: 900 } });
    expect(r.body.schedule.partition).toBeGreaterThanOrEqual(0);
    expect(r.body.schedule.partition).toBeLessThan(16);
    expect(await q("SELECT action FROM audit_log WHERE schedule_id = $1", [r.body.schedule.id])).toEqual([{ action: "schedule.create" }]);
  });

  it("refuses duplicates (409 name) and bad fields (400 with the field), saving nothing", async () => {
    const before = await q<{ n: number }>("SELECT count(*)::int AS n FROM schedules");
    expect((await call("POST", "list", null, { body: { name: "nightly report", handler: "noop", everySeconds: 60 } })).body.error).toMatchObject({ code: "conflict", field: "name" });
    const bad = await call("POST", "list", null, { body: { name: "x", handler: "noop", cron: "0 2 * * *", timezone: "Nowhere/City" } });
    expect([bad.status, bad.body.error.field]).toEqual([400, "timezone"]);
    expect(await q<{ n: number }>("SELECT count(*)::int AS n FROM schedules")).toEqual(before);
  });

  it("saves a schedule for a handler no worker registered, with a warning naming the registered ones, and says it is unserved", async () => {
    const r = await call("POST", "list", null, { body: { name: "unserved-job", handler: "nope", everySeconds: 60 } });
    expect(r.status).toBe(201);
    expect(r.body.warnings).toEqual([{ field: "handler", message: expect.stringContaining('no worker has registered handler "nope" (registered: ') }]);
    expect(r.body.warnings[0].message).toContain("noop");
    expect(r.body.schedule.unservedHandler).toEqual({ handler: "nope", since: null });
    expect((await call("GET", "one", "unserved-job")).body.schedule.unservedHandler).toEqual({ handler: "nope", since: null });
    expect((await call("DELETE", "one", "unserved-job")).status).toBeLessThan(300);
  });

  it("refuses a NUL character in any string or payload key (400 naming the field), saving nothing", async () => {
    // PostgreSQL cannot store U+0000 in text or jsonb; without this check the insert failed with a 500.
    const before = await q<{ n: number }>("SELECT count(*)::int AS n FROM schedules");
    const refuse = async (body: Record<string, unknown>, field: string) => {
      const r = await call("POST", "list", null, { body: { name: "nul-check", handler: "noop", everySeconds: 60, ...body } });
      expect([r.status, r.body.error.code, r.body.error.field]).toEqual([400, "validation", field]);
      expect(r.body.error.message).toContain("NUL");
    };
    await refuse({ description: "name\u0000with-nul" }, "description");
    await refuse({ payload: { url: "https://example.test/\u0000" } }, "payload.url");
    await refuse({ payload: { nested: [{ ok: 1 }, { "k\u0000": 2 }] } }, "payload.nested.1.k\u0000");
    const patch = await call("PATCH", "one", "nightly report", { body: { version: 1, description: "\u0000" } });
    expect([patch.status, patch.body.error.field]).toEqual([400, "description"]);
    // Not through a body: a name in the path.
    const read = await call("GET", "one", "a\u0000b");
    expect([read.status, read.body.error.field]).toEqual([400, "request"]);
    expect(await q<{ n: number }>("SELECT count(*)::int AS n FROM schedules")).toEqual(before);
  });

  it("reads one (URL-encoded name) and lists; 404 for unknown names", async () => {
    expect((await call("GET", "one", "nightly report")).body.schedule.name).toBe("nightly report");
    expect((await call("GET", "one", "missing")).status).toBe(404);
    const list = await call("GET", "list", null, { query: "?search=nightly" });
    expect(list.body.schedules.map((s: { name: string }) => s.name)).toEqual(["nightly report"]);
    expect(list.body.schedules[0]).toHaveProperty("deadRuns", 0);
  });

  it("edits optimistically: a stale version is 409 on version; a timing change restarts the high-water mark", async () => {
    await tick();
    const stale = await call("PATCH", "one", "nightly report", { body: { version: 7, jitterSeconds: 0 } });
    expect([stale.status, stale.body.error.field]).toEqual([409, "version"]);
    expect((await call("PATCH", "one", "nightly report", { body: { jitterSeconds: 0 } })).body.error.field).toBe("version");
    const ok = await call("PATCH", "one", "nightly report", { body: { version: 1, cron: "*/10 * * * *" } });
    expect(ok.status).toBe(200);
    expect(ok.body.schedule).toMatchObject({ version: 2, cron: "*/10 * * * *", everySeconds: null, nextSlotAt: "2024-03-01T10:10:00.000Z" });
  });

  it("pause withdraws pending slots; resume applies the catch-up policy to what was missed", async () => {
    await setClock(t.pool, at("10:09:00"));
    await tick(); // 10:10 materialised
    expect(await q("SELECT state FROM runs r JOIN schedules s ON s.id = r.schedule_id WHERE s.name = 'nightly report'")).toEqual([{ state: "pending" }]);
    expect((await call("POST", "pause", "nightly report")).body.schedule.enabled).toBe(false);
    expect(await q("SELECT state FROM runs")).toEqual([]);
    await setClock(t.pool, at("10:45:00"));
    await tick();
    expect(await q("SELECT count(*)::int AS n FROM runs")).toEqual([{ n: 0 }]);
    await call("POST", "resume", "nightly report");
    await tick();
    const rows = await q("SELECT to_char(scheduled_for, 'HH24:MI') AS slot, state, origin, skip_reason, skipped_count FROM runs ORDER BY scheduled_for");
    expect(rows).toEqual([
      { slot: "10:10", state: "skipped", origin: "schedule", skip_reason: "coalesced", skipped_count: 3 },
      { slot: "10:40", state: "pending", origin: "catch_up", skip_reason: null, skipped_count: null },
    ]);
  });

  it("run now creates a manual run with its own idempotency key, every time", async () => {
    const a = await call("POST", "run-now", "nightly report");
    const b = await call("POST", "run-now", "nightly report");
    expect(a.body.run).toMatchObject({ origin: "manual", state: "pending", scheduledFor: "2024-03-01T10:45:00.000Z" });
    expect(a.body.run.idempotencyKey).toBe(`sk:${a.body.run.scheduleId}:manual:${a.body.run.id}`);
    expect(b.body.run.id).not.toBe(a.body.run.id);
  });

  it("backfills the slots without a row; dry run counts; refuses too many and the future on 'to'", async () => {
    const dry = await call("POST", "backfill", "nightly report", { body: { from: "2024-03-01T09:00:00Z", to: "2024-03-01T10:10:00Z" }, query: "?dryRun=1" });
    // 09:00..10:10 is 8 slots; 10:10 already has a row (the coalesced range starts there).
    expect(dry.body).toMatchObject({ dryRun: true, slots: 8, wouldCreate: 7, created: 0 });
    expect(await q("SELECT count(*)::int AS n FROM runs WHERE origin = 'backfill'")).toEqual([{ n: 0 }]);
    const real = await call("POST", "backfill", "nightly report", { body: { from: "2024-03-01T09:00:00Z", to: "2024-03-01T10:10:00Z" } });
    expect(real.body).toMatchObject({ dryRun: false, created: 7 });
    expect((await call("POST", "backfill", "nightly report", { body: { from: "2024-03-01T09:00:00Z", to: "2024-03-01T10:10:00Z" } })).body.created).toBe(0);
    const tooMany = await call("POST", "backfill", "nightly report", { body: { from: "2020-01-01T00:00:00Z", to: "2024-03-01T00:00:00Z" } });
    expect([tooMany.status, tooMany.body.error.field]).toEqual([400, "to"]);
    const future = await call("POST", "backfill", "nightly report", { body: { from: "2024-03-01T10:00:00Z", to: "2024-03-02T00:00:00Z" } });
    expect([future.status, future.body.error.field]).toEqual([400, "to"]);
    expect((await call("POST", "backfill", "nightly report", { body: { from: "x", to: "2024-03-01T00:00:00Z" } })).body.error.field).toBe("from");
  });

  it("delete keeping history: the name is free, pending runs are skipped 'deleted', the rows stay", async () => {
    const id = (await call("GET", "one", "nightly report")).body.schedule.id;
    const r = await call("DELETE", "one", "nightly report");
    expect(r.status).toBe(200);
    expect(await q("SELECT count(*)::int AS n FROM runs WHERE schedule_id = $1 AND state = 'pending'", [id])).toEqual([{ n: 0 }]);
    expect((await q<{ n: number }>("SELECT count(*)::int AS n FROM runs WHERE schedule_id = $1 AND skip_reason = 'deleted'", [id]))[0].n).toBeGreaterThan(0);
    expect((await call("GET", "one", "nightly report")).status).toBe(404);
    const again = await call("POST", "list", null, { body: { name: "nightly report", handler: "noop", everySeconds: 60 } });
    expect(again.status).toBe(201);
    await call("POST", "run-now", "nightly report");
    expect((await call("DELETE", "one", "nightly report", { query: "?history=delete" })).status).toBe(200);
    expect(await q("SELECT count(*)::int AS n FROM runs WHERE schedule_id = $1", [again.body.schedule.id])).toEqual([{ n: 0 }]);
    expect((await call("DELETE", "one", "nightly report", { query: "?history=maybe" })).status).toBe(400);
  });
});

describe("the list's search", () => {
  const names = async (term: string) =>
    (await call("GET", "list", null, { query: `?search=${encodeURIComponent(term)}` })).body.schedules.map((s: { name: string }) => s.name);
  const versions = async (name: string) =>
    (
      await q<{ schedule: string; search: string }>(
        "SELECT s.xmin::text AS schedule, ss.xmin::text AS search FROM schedules s JOIN schedule_search ss ON ss.schedule_id = s.id WHERE s.name = $1",
        [name],
      )
    )[0];

  it("finds a schedule by its name, handler and description as edited; the tick's advance does not rewrite what it searches", async () => {
    await setClock(t.pool, at("12:00:00"));
    const made = await call("POST", "list", null, { body: { name: "ledger-sync", handler: "noop", description: "books the day", everySeconds: 60 } });
    expect(made.status).toBe(201);
    expect(await names("ledger")).toEqual(["ledger-sync"]);
    expect(await names("books the")).toEqual(["ledger-sync"]);

    const edited = await call("PATCH", "one", "ledger-sync", { body: { version: 1, name: "journal-sync", handler: "http", payload: { url: "http://127.0.0.1:9/x" }, description: "closes the month" } });
    expect(edited.status).toBe(200);
    expect(await names("ledger")).toEqual([]);
    expect(await names("books")).toEqual([]);
    expect(await names("journal")).toEqual(["journal-sync"]);
    expect(await names("closes the month")).toEqual(["journal-sync"]);
    expect(await names("http")).toContain("journal-sync");

    // xmin is the transaction that wrote a row's current version, as PostgreSQL records it: the
    // tick rewrites the schedule (its next slot) and leaves its search row as the edit wrote it.
    const before = await versions("journal-sync");
    await setClock(t.pool, at("12:05:00"));
    expect((await tick()).schedules).toBeGreaterThan(0);
    const after = await versions("journal-sync");
    expect(after.schedule).not.toBe(before.schedule);
    expect(after.search).toBe(before.search);

    expect((await call("DELETE", "one", "journal-sync", { query: "?history=delete" })).status).toBe(200);
    expect(await q("SELECT count(*)::int AS n FROM schedule_search ss WHERE NOT EXISTS (SELECT 1 FROM schedules s WHERE s.id = ss.schedule_id)")).toEqual([{ n: 0 }]);
    expect(await names("journal")).toEqual([]);
  });

  it("matches a term's quotes, backslashes, % and _ as themselves, and refuses a NUL (400 naming search)", async () => {
    const made = await call("POST", "list", null, { body: { name: "odd-chars", handler: "noop", description: "it's 50%_off \\ now", everySeconds: 60 } });
    expect(made.status).toBe(201);
    expect(await names("it's 50%_off \\ now")).toEqual(["odd-chars"]);
    expect(await names("50%_o")).toEqual(["odd-chars"]);
    expect(await names("50__o")).toEqual([]);
    expect(await names("s 5")).toEqual(["odd-chars"]);
    const nul = await call("GET", "list", null, { query: "?search=a%00b" });
    expect([nul.status, nul.body.error.field]).toEqual([400, "search"]);
    expect((await call("DELETE", "one", "odd-chars", { query: "?history=delete" })).status).toBe(200);
  });
});
