// Tags and an owner on schedules through the API: stored and shown as given, edited and cleared,
// filtered in the list (checked against the test's own record of what it created), and bad input
// refused naming the field with nothing written.
import { beforeAll, describe, expect, it } from "vitest";
import { setupTestDatabase } from "@/lib/testing/db";

const t = setupTestDatabase({ routes: true });
type Handler = (req: Request, ctx: { params: Promise<{ name: string }> }) => Promise<Response>;
type RouteModule = Partial<Record<"GET" | "POST" | "PATCH", Handler>>;
let list: RouteModule;
let one: RouteModule;

beforeAll(async () => {
  list = (await import("./route")) as unknown as RouteModule;
  one = (await import("./[name]/route")) as unknown as RouteModule;
});

async function call(mod: RouteModule, method: "GET" | "POST" | "PATCH", path: string, body?: unknown, name = "") {
  const init: RequestInit = { method, headers: { "content-type": "application/json", origin: "http://127.0.0.1" } };
  if (body !== undefined) init.body = JSON.stringify(body);
  const res = await mod[method]!(new Request(`http://127.0.0.1${path}`, init), { params: Promise.resolve({ name: encodeURIComponent(name) }) });
  return { status: res.status, body: await res.json() };
}

const namesOf = (r: { body: { schedules: { name: string }[] } }) => r.body.schedules.map((s) => s.name).sort();

describe("schedule tags and owner", () => {
  it("keeps what was given, filters by tag and owner exactly as a brute-force filter would, and clears", async () => {
    const made = [
      { name: "billing-nightly", tags: ["billing", "nightly"], owner: "team-billing" },
      { name: "billing-hourly", tags: ["billing"], owner: "team-billing" },
      { name: "search-reindex", tags: ["search", "nightly"], owner: "Ana Souza" },
      { name: "untagged", tags: [] as string[], owner: null },
    ];
    for (const m of made) {
      const r = await call(list, "POST", "/api/schedules", { name: m.name, handler: "noop", everySeconds: 3600, tags: m.tags, ...(m.owner ? { owner: m.owner } : {}) });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      expect(r.body.schedule).toMatchObject({ tags: m.tags, owner: m.owner });
    }
    const stored = await t.pool.query<{ name: string; tags: string[]; owner: string | null }>("SELECT name, tags, owner FROM schedules ORDER BY name");
    expect(stored.rows).toEqual([...made].sort((a, b) => a.name.localeCompare(b.name)).map((m) => ({ name: m.name, tags: m.tags, owner: m.owner })));

    for (const tag of ["billing", "nightly", "search", "absent"]) {
      const r = await call(list, "GET", `/api/schedules?tag=${tag}`);
      expect(r.status).toBe(200);
      expect(namesOf(r), tag).toEqual(made.filter((m) => m.tags.includes(tag)).map((m) => m.name).sort());
    }
    for (const owner of ["team-billing", "Ana Souza"]) {
      const r = await call(list, "GET", `/api/schedules?owner=${encodeURIComponent(owner)}`);
      expect(namesOf(r)).toEqual(made.filter((m) => m.owner === owner).map((m) => m.name).sort());
    }
    const both = await call(list, "GET", "/api/schedules?tag=nightly&owner=team-billing");
    expect(namesOf(both)).toEqual(["billing-nightly"]);

    // Edit: new tags replace the old; owner null clears it.
    const got = await call(one, "GET", "/api/schedules/billing-hourly", undefined, "billing-hourly");
    const edited = await call(one, "PATCH", "/api/schedules/billing-hourly", { tags: ["payments"], owner: null, version: got.body.schedule.version }, "billing-hourly");
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    expect(edited.body.schedule).toMatchObject({ tags: ["payments"], owner: null });
    expect(namesOf(await call(list, "GET", "/api/schedules?tag=billing"))).toEqual(["billing-nightly"]);
    const audit = await t.pool.query<{ before: Record<string, unknown>; after: Record<string, unknown> }>("SELECT before, after FROM audit_log WHERE action = 'schedule.update' AND target_id = 'billing-hourly'");
    expect(audit.rows).toHaveLength(1);
    expect(audit.rows[0].before).toMatchObject({ tags: ["billing"], owner: "team-billing" });
    expect(audit.rows[0].after).toMatchObject({ tags: ["payments"], owner: null });
  });

  it("refuses a bad tag or owner naming the field, and writes nothing", async () => {
    const before = (await t.pool.query("SELECT count(*)::int AS n FROM schedules")).rows[0].n;
    const cases: [Record<string, unknown>, string][] = [
      [{ tags: ["ok", "has space"] }, "tags.1"],
      [{ tags: "billing" }, "tags"],
      [{ tags: ["a", "a"] }, "tags"],
      [{ tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, "tags"],
      [{ owner: "   " }, "owner"],
      [{ owner: 42 }, "owner"],
    ];
    for (const [extra, field] of cases) {
      const r = await call(list, "POST", "/api/schedules", { name: `bad-${field}-${Math.random().toString(36).slice(2, 7)}`, handler: "noop", everySeconds: 60, ...extra });
      expect(r.status, JSON.stringify(extra)).toBe(400);
      expect(r.body.error.field, JSON.stringify(extra)).toBe(field);
    }
    expect((await t.pool.query("SELECT count(*)::int AS n FROM schedules")).rows[0].n).toBe(before);
    const r = await call(list, "GET", "/api/schedules?tag=has%20space");
    expect(r.status).toBe(400);
    expect(r.body.error.field).toBe("tag");
  });
});
