// API tokens through the real routes (as Next calls them) on a real database: scopes decide what a
// token may do, expiry follows the database clock, a tag-restricted token sees and changes only
// schedules with one of its tags, and minting never widens what the minter had. Every "nothing
// changed" is read back from the tables, not from the API's answers.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PEER_HEADER } from "@/lib/auth/client-address";
import { advanceClock, runClockFrom, setClock } from "@/lib/testing/clock";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { makeRun, makeSchedule } from "@/lib/testing/factories";

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
type Mod = Record<string, Handler>;
const MODULES = import.meta.glob<Mod>("./**/route.ts");
const load = (route: string) => MODULES[`./${route}/route.ts`]();

let t: TestDatabase;
const remote = (token: string) => ({ [PEER_HEADER]: "203.0.113.9", authorization: `Bearer ${token}` });

async function call(route: string, method: string, headers: Record<string, string>, opts: { body?: unknown; params?: Record<string, string>; query?: string } = {}) {
  const mod = await load(route);
  const path = route.replace(/\[(\w+)\]/g, (_m, k: string) => encodeURIComponent(opts.params?.[k] ?? "x"));
  const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  const h = body === undefined ? headers : { ...headers, "content-type": "application/json" };
  return mod[method](new Request(`http://localhost/api/${path}${opts.query ?? ""}`, { method, headers: h, body }), { params: Promise.resolve(opts.params ?? {}) });
}

/** Mint a token as the local operator (loopback, no credentials configured). */
async function mint(body: Record<string, unknown>, as: Record<string, string> = { origin: "http://localhost" }) {
  const res = await call("tokens", "POST", as, { body });
  return { status: res.status, json: (await res.json()) as { token: string; tokenInfo: { id: number }; error?: { field?: string; message: string } } };
}

const enabled = async (name: string) => (await t.pool.query<{ enabled: boolean }>("SELECT enabled FROM schedules WHERE name = $1", [name])).rows[0].enabled;
const auditCount = async () => Number((await t.pool.query<{ n: string }>("SELECT count(*) AS n FROM audit_log WHERE action LIKE 'schedule.%'")).rows[0].n);

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 4 });
  process.env.DATABASE_URL = t.url;
  await runClockFrom(t.pool, "2030-01-01T00:00:00Z");
});

afterAll(async () => {
  const { getDb } = await import("@/lib/server/db");
  await getDb().$client.end();
  await t.drop();
});

describe("scopes", () => {
  it("read reads, operate changes schedules but not tokens, admin mints and revokes", async () => {
    await makeSchedule(t.db, { name: "scoped", everySeconds: 3600 });
    const read = (await mint({ name: "r", scope: "read" })).json.token;
    const operate = (await mint({ name: "o", scope: "operate" })).json.token;
    const admin = (await mint({ name: "a", scope: "admin" })).json.token;

    expect((await call("schedules", "GET", remote(read))).status).toBe(200);
    expect((await call("schedules/[name]/pause", "POST", remote(read), { params: { name: "scoped" } })).status).toBe(403);
    expect(await enabled("scoped")).toBe(true);

    expect((await call("schedules/[name]/pause", "POST", remote(operate), { params: { name: "scoped" } })).status).toBe(200);
    expect(await enabled("scoped")).toBe(false);
    expect((await mint({ name: "x", scope: "read" }, remote(operate))).status).toBe(403);
    expect((await call("tokens", "GET", remote(operate))).status).toBe(403);

    const minted = await mint({ name: "by-admin", scope: "operate" }, remote(admin));
    expect(minted.status).toBe(201);
    expect((await call("tokens", "GET", remote(admin))).status).toBe(200);
    expect((await call("tokens/[id]/revoke", "POST", remote(admin), { params: { id: String(minted.json.tokenInfo.id) } })).status).toBe(200);
    expect((await call("me", "GET", remote(minted.json.token))).status).toBe(401);

    const row = (await t.pool.query<{ scope: string; last_used_at: Date | null; created_by: string }>("SELECT scope, last_used_at, created_by FROM api_tokens WHERE name = 'o'")).rows[0];
    expect(row.scope).toBe("operate");
    expect(row.last_used_at).not.toBeNull();
    const list = await (await call("tokens", "GET", remote(admin))).text();
    for (const secret of [read, operate, admin]) expect(list).not.toContain(secret);
  });

  it("expire by the database clock, and an expiring token mints nothing that outlives it", async () => {
    const short = await mint({ name: "short", scope: "admin", expiresAt: "2030-01-01T01:00:00Z" });
    expect(short.status).toBe(201);
    expect((await call("me", "GET", remote(short.json.token))).status).toBe(200);

    const forever = await mint({ name: "forever", scope: "read" }, remote(short.json.token));
    expect(forever.status).toBe(403);
    expect(forever.json.error?.field).toBe("expiresAt");
    expect((await mint({ name: "later", scope: "read", expiresAt: "2030-01-02T00:00:00Z" }, remote(short.json.token))).status).toBe(403);
    expect((await mint({ name: "sooner", scope: "read", expiresAt: "2030-01-01T00:30:00Z" }, remote(short.json.token))).status).toBe(201);

    await setClock(t.pool, "2030-01-01T01:00:01Z");
    const expired = await call("me", "GET", remote(short.json.token));
    expect(expired.status).toBe(401);
    await advanceClock(t.pool, -2 * 3600_000);
    expect((await call("me", "GET", remote(short.json.token))).status).toBe(200);
    await runClockFrom(t.pool, "2030-01-01T00:00:00Z");
  });
});

describe("a tag-restricted token", () => {
  let token = "";
  let billingRun = 0;
  let reportsRun = 0;

  beforeAll(async () => {
    const billing = await makeSchedule(t.db, { name: "billing-job", everySeconds: 3600, tags: ["billing", "eu"] });
    const reports = await makeSchedule(t.db, { name: "reports-job", everySeconds: 3600, tags: ["reports"] });
    const slot = new Date("2030-01-01T00:00:00Z");
    billingRun = (await makeRun(t.db, { scheduleId: billing.id, scheduledFor: slot, state: "dead" })).id;
    reportsRun = (await makeRun(t.db, { scheduleId: reports.id, scheduledFor: slot, state: "dead" })).id;
    const minted = await mint({ name: "billing-bot", scope: "operate", scheduleTags: ["billing"] });
    expect(minted.status).toBe(201);
    token = minted.json.token;
  });

  it("lists and reads only matching schedules and their runs", async () => {
    const list = (await (await call("schedules", "GET", remote(token))).json()) as { schedules: { name: string }[] };
    expect(list.schedules.map((s) => s.name)).toEqual(["billing-job"]);
    expect((await call("schedules/[name]", "GET", remote(token), { params: { name: "billing-job" } })).status).toBe(200);
    expect((await call("schedules/[name]", "GET", remote(token), { params: { name: "reports-job" } })).status).toBe(404);
    expect((await call("schedules/[name]/runs", "GET", remote(token), { params: { name: "reports-job" } })).status).toBe(404);
    expect((await call("schedules/[name]/audit", "GET", remote(token), { params: { name: "reports-job" } })).status).toBe(404);
    const runs = (await (await call("runs", "GET", remote(token))).json()) as { runs: { id: number }[] };
    expect(runs.runs.map((r) => r.id)).toEqual([billingRun]);
    const named = (await (await call("runs", "GET", remote(token), { query: "?schedule=reports-job" })).json()) as { runs: unknown[] };
    expect(named.runs).toEqual([]);
    expect((await call("runs/[id]", "GET", remote(token), { params: { id: String(reportsRun) } })).status).toBe(404);
    expect((await call("runs/[id]", "GET", remote(token), { params: { id: String(billingRun) } })).status).toBe(200);
  });

  it("changes only matching schedules and runs; the others stay as they were", async () => {
    const before = await auditCount();
    for (const action of ["pause", "run-now"]) {
      expect((await call(`schedules/[name]/${action}`, "POST", remote(token), { params: { name: "reports-job" } })).status, action).toBe(404);
    }
    expect((await call("schedules/[name]", "DELETE", remote(token), { params: { name: "reports-job" } })).status).toBe(404);
    expect((await call("schedules/[name]", "PATCH", remote(token), { params: { name: "reports-job" }, body: { description: "x", version: 1 } })).status).toBe(404);
    expect((await call("runs/[id]/requeue", "POST", remote(token), { params: { id: String(reportsRun) } })).status).toBe(404);
    // Both schedules have a dead run; a bulk re-queue by filter finds only the one in reach.
    const dry = (await (await call("bulk/runs", "POST", remote(token), { body: { action: "requeue", filter: {}, dryRun: true } })).json()) as { matched: number };
    expect(dry.matched).toBe(1);
    const bulk = (await (await call("runs/requeue", "POST", remote(token), { body: { ids: [reportsRun, billingRun] } })).json()) as { requeued: number[]; missing: number[] };
    expect(bulk).toMatchObject({ requeued: [billingRun], missing: [reportsRun] });

    const states = await t.pool.query<{ id: number; state: string }>("SELECT id, state FROM runs WHERE id = ANY($1) ORDER BY id", [[billingRun, reportsRun]]);
    expect(states.rows.map((r) => [Number(r.id), r.state])).toEqual([
      [billingRun, "pending"],
      [reportsRun, "dead"],
    ]);
    expect(await enabled("reports-job")).toBe(true);
    const counts = await t.pool.query<{ n: string }>("SELECT count(*) AS n FROM runs WHERE schedule_id = (SELECT id FROM schedules WHERE name = 'reports-job')");
    expect(Number(counts.rows[0].n)).toBe(1);
    expect(await auditCount()).toBe(before);

    expect((await call("schedules/[name]/pause", "POST", remote(token), { params: { name: "billing-job" } })).status).toBe(200);
    expect(await enabled("billing-job")).toBe(false);
  });

  it("cannot reach a live untagged schedule through a deleted tagged one of the same name", async () => {
    const gone = await makeSchedule(t.db, { name: "shared-name", everySeconds: 3600, tags: ["billing"], enabled: false });
    await t.pool.query("UPDATE schedules SET deleted_at = sk_now() WHERE id = $1", [gone.id]);
    const live = await makeSchedule(t.db, { name: "shared-name", everySeconds: 3600, tags: ["reports"] });
    const before = await auditCount();
    for (const sub of ["", "/runs", "/audit"]) {
      expect((await call(`schedules/[name]${sub}`, "GET", remote(token), { params: { name: "shared-name" } })).status, sub).toBe(404);
    }
    for (const action of ["pause", "run-now"]) {
      expect((await call(`schedules/[name]/${action}`, "POST", remote(token), { params: { name: "shared-name" } })).status, action).toBe(404);
    }
    expect((await call("schedules/[name]", "PATCH", remote(token), { params: { name: "shared-name" }, body: { description: "x", version: 1 } })).status).toBe(404);
    expect((await call("schedules/[name]", "DELETE", remote(token), { params: { name: "shared-name" } })).status).toBe(404);
    const row = await t.pool.query<{ enabled: boolean; deleted_at: Date | null; description: string | null }>("SELECT enabled, deleted_at, description FROM schedules WHERE id = $1", [live.id]);
    expect(row.rows[0]).toMatchObject({ enabled: true, deleted_at: null });
    expect(row.rows[0].description).not.toBe("x");
    expect(Number((await t.pool.query<{ n: string }>("SELECT count(*) AS n FROM runs WHERE schedule_id = $1", [live.id])).rows[0].n)).toBe(0);
    expect(await auditCount()).toBe(before);
  });

  it("cannot create a schedule outside its tags, nor reach routes that are not about its schedules", async () => {
    const created = await call("schedules", "POST", remote(token), { body: { name: "untagged", handler: "noop", everySeconds: 60 } });
    expect([400, 403]).toContain(created.status);
    expect((await t.pool.query("SELECT 1 FROM schedules WHERE name = 'untagged'")).rowCount).toBe(0);
    for (const route of ["workers", "overview", "audit", "metrics", "alerts", "alerts/channels", "charts"]) {
      const res = await call(route, "GET", remote(token));
      expect(res.status, route).toBe(403);
      expect(((await res.json()) as { error: { message: string } }).error.message, route).toContain("restricted to schedules tagged billing");
    }
    const me = (await (await call("me", "GET", remote(token))).json()) as { actor: { scheduleTags: string[] } };
    expect(me.actor.scheduleTags).toEqual(["billing"]);
  });
});
