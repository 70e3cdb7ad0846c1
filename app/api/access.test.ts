// Every API route behind the access layer, called as Next calls it (a Request and a params
// promise) against a real database: anonymous remote clients, viewers, cross-origin mutations and
// non-JSON bodies are refused; tokens work until revoked; every mutation leaves an audit entry.
import { beforeAll, describe, expect, it } from "vitest";
import { evaluateAlerts } from "@/lib/alerts/evaluate";
import { PEER_HEADER } from "@/lib/auth/client-address";
import { setupTestDatabase } from "@/lib/testing/db";
import { makeRun, makeSchedule } from "@/lib/testing/factories";

/** Every route module under app/api, with the methods it exports. */
const MODULES = import.meta.glob<Record<string, unknown>>("./**/route.ts", { eager: true });
/** Routes outside the wrappers on purpose: liveness probes, and signing in itself. */
const OPEN = new Set(["health", "auth/login", "auth/logout", "auth/oidc/start", "auth/oidc/callback"]);
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
const MUTATING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;

const routeOf = (key: string) => key.slice(2, -"/route.ts".length);
const routes = Object.keys(MODULES).map(routeOf).filter((r) => !OPEN.has(r)).sort();
const methodsOf = (route: string) => METHODS.filter((m) => typeof MODULES[`./${route}/route.ts`][m] === "function");
/** Every (route, method) the access layer guards: the cases below are generated from these, so none is empty. */
const guarded = routes.flatMap((r) => methodsOf(r).map((m) => [r, m] as const));
const mutations = guarded.filter(([, m]) => MUTATING.has(m));
const reads = guarded.filter(([, m]) => m === "GET").map(([r]) => r);

/** The fixtures' ids, which the [id] and [name] segments of each route name. */
const ids = { schedule: "x", run: 0, channel: 0, token: 0 };
const paramsFor = (route: string) => ({
  name: ids.schedule,
  id: String(route.startsWith("runs/") ? ids.run : route.startsWith("alerts/channels/") ? ids.channel : ids.token),
});
const call = async (route: string, method: string, headers: Record<string, string>, body?: string, query = "") => {
  const p = paramsFor(route);
  const path = route.replace(/\[(\w+)\]/g, (_m, k: "name" | "id") => encodeURIComponent(p[k]));
  const handler = MODULES[`./${route}/route.ts`][method] as Handler;
  return handler(new Request(`http://localhost:3000/api/${path}${query}`, { method, headers, body }), { params: Promise.resolve(p) });
};

const tdb = setupTestDatabase({ poolSize: 4, routes: true, reset: false });
let viewerToken = "";
let operatorToken = "";

beforeAll(async () => {
  const mk = async (name: string, scope: string) => {
    const res = await call("tokens", "POST", { "content-type": "application/json" }, JSON.stringify({ name, scope }));
    expect(res.status).toBe(201);
    return ((await res.json()) as { token: string }).token;
  };
  viewerToken = await mk("ci-viewer", "read");
  operatorToken = await mk("ci-operator", "operate");
  ids.token = Number((await tdb.pool.query("SELECT id FROM api_tokens WHERE name = 'ci-viewer'")).rows[0].id);
  const s = await makeSchedule(tdb.db, { name: ids.schedule });
  ids.run = (await makeRun(tdb.db, { scheduleId: s.id, state: "dead", attempts: 6 })).id;
  // The status aggregates are the alert pass's judgement, as in production where the worker runs it.
  await evaluateAlerts(tdb.db, { publicUrl: "http://localhost:3000", reminderSeconds: 0 });
  ids.channel = Number(
    (await tdb.pool.query(`INSERT INTO alert_channels (name, kind, config) VALUES ('ops', 'webhook', '{"url": "http://127.0.0.1:9/"}') RETURNING id`)).rows[0].id,
  );
});

type Json = Record<string, unknown>;
/**
 * What a loopback GET of each route answers with the fixtures in place: its status and the part of
 * the body that shows the route did its work. A route without an entry fails "every GET route has
 * an expected answer", so a new route gets one.
 */
const LOOPBACK_GET: Record<string, { query?: string; expect: (body: Json, res: Response) => void }> = {
  "alerts/channels/[id]": { expect: (b) => expect(b.channel).toMatchObject({ id: ids.channel, name: "ops", kind: "webhook" }) },
  "alerts/channels": { expect: (b) => expect(b).toMatchObject({ channels: [{ id: ids.channel, name: "ops" }], smtpConfigured: false }) },
  // The fixture's dead run makes its schedule fail: one alert firing, one event that opened it.
  "alerts/events": { expect: (b) => expect(b).toMatchObject({ events: [expect.objectContaining({ rule: "failing" })], nextBefore: null }) },
  alerts: { expect: (b) => expect(b).toMatchObject({ firing: [expect.objectContaining({ rule: "failing" })] }) },
  audit: { expect: (b) => expect(b).toMatchObject({ entries: expect.arrayContaining([expect.objectContaining({ action: "token.create" })]) }) },
  charts: { query: "?window=1h&schedule=x", expect: (b) => expect(b).toMatchObject({ window: "1h", series: [{ name: "x" }] }) },
  export: { expect: (b) => expect((b.schedules as { name: string }[]).map((x) => x.name)).toEqual(["x"]) },
  handlers: { expect: (b) => expect((b.handlers as { name: string }[]).map((h) => h.name)).toEqual(expect.arrayContaining(["noop", "http", "sleep"])) },
  me: { expect: (b) => expect(b).toEqual({ actor: { name: "local", kind: "local", role: "admin", scope: "admin", scheduleTags: null }, access: "loopback-only" }) },
  metrics: {
    expect: (_b, res) => {
      expect(res.headers.get("content-type")).toContain("text/plain");
    },
  },
  "openapi.json": { expect: (b) => expect(b).toMatchObject({ openapi: "3.1.0", paths: { "/api/openapi.json": { get: {} } } }) },
  overview: { expect: (b) => expect(b.totals).toMatchObject({ schedules: 1, dead: 1 }) },
  people: { expect: (b) => expect(b).toEqual({ people: [] }) },
  "runs/[id]": { expect: (b) => expect(b.run).toMatchObject({ id: ids.run, scheduleName: "x", state: "dead", attempts: 6 }) },
  runs: { query: "?state=dead", expect: (b) => expect((b.runs as { id: number }[]).map((r) => r.id)).toEqual([ids.run]) },
  "schedules/[name]/audit": { expect: (b) => expect(b).toEqual({ entries: [], nextCursor: null }) },
  "schedules/[name]": { expect: (b) => expect(b.schedule).toMatchObject({ name: "x", handler: "noop", deadRuns: 1 }) },
  "schedules/[name]/runs": { expect: (b) => expect((b.runs as { id: number }[]).map((r) => r.id)).toEqual([ids.run]) },
  schedules: { expect: (b) => expect((b.schedules as { name: string }[]).map((x) => x.name)).toEqual(["x"]) },
  "timing/preview": {
    query: "?everySeconds=60",
    expect: (b) => {
      expect(b).toEqual({ nextFireTimes: expect.any(Array), description: expect.stringMatching(/minute/i) });
      expect(b.nextFireTimes).toHaveLength(5);
    },
  },
  tokens: { expect: (b) => expect((b.tokens as { name: string }[]).map((x) => x.name).sort()).toEqual(["ci-operator", "ci-viewer"]) },
  workers: { expect: (b) => expect(b).toEqual({ workers: [] }) },
};

describe("every API route", () => {
  it("covers the routes this test knows about, each exporting a handler", () => {
    expect(routes).toEqual(expect.arrayContaining(["me", "tokens", "audit", "schedules/[name]/audit"]));
    expect(mutations).toEqual(expect.arrayContaining([["runs/[id]/requeue", "POST"], ["runs/[id]/cancel", "POST"], ["runs/[id]/discard", "POST"]]));
    for (const r of routes) expect(methodsOf(r), `/api/${r} exports no handler`).not.toEqual([]);
    expect(mutations.length).toBeGreaterThan(10);
  });

  it("every GET route has an expected answer for a loopback caller", () => {
    expect(Object.keys(LOOPBACK_GET).sort()).toEqual([...reads].sort());
  });

  it.each(guarded)("%s %s refuses an anonymous non-loopback client with 403 and instructions", async (route, method) => {
    const res = await call(route, method, { [PEER_HEADER]: "203.0.113.7", origin: "http://localhost:3000" });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain("SLOTKEEPER_OPERATOR_PASSWORD");
  });

  it.each(mutations)("%s %s refuses a viewer's mutation, a cross-origin one and a non-JSON body", async (route, method) => {
    const asViewer = await call(route, method, { authorization: `Bearer ${viewerToken}`, "content-type": "application/json" }, "{}");
    expect(asViewer.status, "viewer").toBe(403);
    expect(((await asViewer.json()) as { error: { code: string } }).error.code).toBe("forbidden");
    const crossOrigin = await call(route, method, { origin: "http://evil.example", "sec-fetch-site": "cross-site", "content-type": "application/json" }, "{}");
    expect(crossOrigin.status, "cross-origin").toBe(403);
    const form = await call(route, method, { origin: "http://localhost:3000", "content-type": "application/x-www-form-urlencoded" }, "a=1");
    expect(form.status, "form body").toBe(400);
  });

  it.each(reads)("GET %s answers a loopback caller with its data", async (route) => {
    const want = LOOPBACK_GET[route];
    const res = await call(route, "GET", { [PEER_HEADER]: "127.0.0.1" }, undefined, want.query);
    expect(res.status).toBe(200);
    const text = await res.text();
    want.expect(res.headers.get("content-type")?.includes("json") ? (JSON.parse(text) as Json) : ({ text } as Json), res);
    // The fixture's one schedule (handler noop) has a dead run: failing, in the default aggregates.
    if (route === "metrics") expect(text).toContain('slotkeeper_schedules{status="failing",handler="noop"} 1');
  });
});

describe("people", () => {
  it("only an admin lists, adds and changes people; any person changes only their own password", async () => {
    const asToken = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" });
    const body = JSON.stringify({ name: "pat", role: "viewer", password: "pat-password-1" });
    for (const token of [viewerToken, operatorToken]) {
      expect((await call("people", "GET", asToken(token))).status).toBe(403);
      expect((await call("people", "POST", asToken(token), body)).status).toBe(403);
      expect((await call("people/[name]", "PATCH", asToken(token), JSON.stringify({ role: "admin" }))).status).toBe(403);
    }
    expect((await tdb.pool.query("SELECT 1 FROM people")).rowCount).toBe(0);
    // The local operator is an admin.
    const created = await call("people", "POST", { origin: "http://localhost:3000", "content-type": "application/json" }, body);
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({ person: { name: "pat", role: "viewer", displayName: null, disabledAt: null } });
    expect((await tdb.pool.query("SELECT actor, actor_kind FROM audit_log WHERE action = 'person.create'")).rows).toEqual([{ actor: "local", actor_kind: "local" }]);
    // A token or the local operator has no password of its own to change.
    expect((await call("me/password", "POST", asToken(operatorToken), JSON.stringify({ currentPassword: "x", newPassword: "long-enough-pw" }))).status).toBe(403);
    expect((await call("me/password", "POST", { "content-type": "application/json" }, JSON.stringify({ currentPassword: "x", newPassword: "long-enough-pw" }))).status).toBe(403);
    await tdb.pool.query("DELETE FROM people");
  });
});

describe("tokens", () => {
  it("work from anywhere until revoked, and are never listed with their secret", async () => {
    const remote = { [PEER_HEADER]: "203.0.113.7", authorization: `Bearer ${operatorToken}` };
    const me = await call("me", "GET", remote);
    expect(await me.json()).toEqual({ actor: { name: "token:ci-operator", kind: "token", role: "operator", scope: "operate", scheduleTags: null }, access: "loopback-only" });

    const list = await call("tokens", "GET", {});
    const text = await list.text();
    expect(text).not.toContain(operatorToken);
    const id = (JSON.parse(text) as { tokens: { id: number; name: string; lastUsedAt: string | null }[] }).tokens.find((t) => t.name === "ci-operator")!;
    expect(id.lastUsedAt).not.toBeNull();

    // An operate token can neither mint nor list tokens.
    expect((await call("tokens", "POST", { ...remote, "content-type": "application/json" }, JSON.stringify({ name: "x", scope: "read" }))).status).toBe(403);
    expect((await call("tokens", "GET", remote)).status).toBe(403);

    const revoke = MODULES["./tokens/[id]/revoke/route.ts"].POST as Handler;
    const res = await revoke(new Request(`http://localhost/api/tokens/${id.id}/revoke`, { method: "POST", headers: { origin: "http://localhost" } }), { params: Promise.resolve({ id: String(id.id) }) });
    expect(res.status).toBe(200);
    const after = await call("me", "GET", remote);
    expect(after.status).toBe(401);
  });

  it("refuses unknown fields, bad scopes, tags and expiry", async () => {
    const bad = async (body: unknown) => (await call("tokens", "POST", { "content-type": "application/json" }, JSON.stringify(body))).json() as Promise<{ error: { field?: string } }>;
    expect((await bad({ name: "a", scope: "read", admin: true })).error.field).toBe("admin");
    expect((await bad({ name: "a", scope: "root" })).error.field).toBe("scope");
    expect((await bad({ name: "a", scope: "read", role: "viewer" })).error.field).toBe("role");
    expect((await bad({ name: "", scope: "read" })).error.field).toBe("name");
    expect((await bad({ name: "a", scope: "read", scheduleTags: ["has space"] })).error.field).toBe("scheduleTags");
    expect((await bad({ name: "a", scope: "read", expiresAt: "tomorrow" })).error.field).toBe("expiresAt");
    expect((await bad({ name: "a", scope: "read", expiresAt: "2001-01-01T00:00:00Z" })).error.field).toBe("expiresAt");
  });
});

describe("audit", () => {
  it("records token mutations with who and what, filterable, paginated newest first", async () => {
    const page1 = await call("audit", "GET", {});
    const body = (await page1.json()) as { entries: { action: string; actor: string; actorKind: string }[] };
    expect(body.entries.map((e) => e.action)).toEqual(expect.arrayContaining(["token.create", "token.revoke"]));
    expect(body.entries[0]).toMatchObject({ action: "token.revoke", actor: "local", actorKind: "local" });

    const get = (q: string) => call("audit", "GET", {}, undefined, `?${q}`);
    const one = (await (await get("limit=1")).json()) as { entries: { id: number }[]; nextCursor: number | null };
    expect(one.entries).toHaveLength(1);
    const two = (await (await get(`limit=1&cursor=${one.nextCursor}`)).json()) as { entries: { id: number }[] };
    expect(two.entries[0].id).toBeLessThan(one.entries[0].id);
    const filtered = (await (await get("action=token.create")).json()) as { entries: { action: string }[] };
    expect(filtered.entries.every((e) => e.action === "token.create")).toBe(true);
    expect((await get("bogus=1")).status).toBe(400);
    expect((await get("from=yesterday")).status).toBe(400);
  });

  it("has no way to change an entry through the API", async () => {
    expect(methodsOf("audit")).toEqual(["GET"]);
  });
});
