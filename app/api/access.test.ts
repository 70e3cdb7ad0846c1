// Every API route behind the access layer, called as Next calls it (a Request and a params
// promise) against a real database: anonymous remote clients, viewers, cross-origin mutations and
// non-JSON bodies are refused; tokens work until revoked; every mutation leaves an audit entry.
import { beforeAll, describe, expect, it } from "vitest";
import { PEER_HEADER } from "@/lib/auth/client-address";
import { setupTestDatabase } from "@/lib/testing/db";

/** Every route module under app/api, loaded lazily (Vite resolves the glob at transform time). */
const MODULES = import.meta.glob<Record<string, Handler>>("./**/route.ts");
/** Routes outside the wrappers on purpose: liveness probes, and signing in itself. */
const OPEN = new Set(["health", "auth/login", "auth/logout"]);
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
const MUTATING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;

const load = (route: string) => MODULES[`./${route}/route.ts`]();

const url = (p: string) => `http://localhost:3000/api/${p.replace(/\[(\w+)\]/g, (_m, k) => (k === "id" ? "1" : "x"))}`;
const params = { params: Promise.resolve({ name: "x", id: "1" }) };
const call = async (route: string, method: string, headers: Record<string, string>, body?: string) => {
  const mod = await load(route);
  return mod[method](new Request(url(route), { method, headers, body }), params);
};

const tdb = setupTestDatabase({ poolSize: 4, routes: true, reset: false });
const routes = Object.keys(MODULES)
  .map((k) => k.slice(2, -"/route.ts".length))
  .filter((r) => !OPEN.has(r))
  .sort();
let viewerToken = "";
let operatorToken = "";

beforeAll(async () => {
  const { POST } = await import("./tokens/route");
  const mk = async (name: string, role: string) => {
    const res = await POST(new Request("http://localhost/api/tokens", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name, role }) }), { params: Promise.resolve({}) });
    expect(res.status).toBe(201);
    return ((await res.json()) as { token: string }).token;
  };
  viewerToken = await mk("ci-viewer", "viewer");
  operatorToken = await mk("ci-operator", "operator");
});


describe("every API route", () => {
  it("covers the routes this test knows about", () => {
    expect(routes).toEqual(expect.arrayContaining(["me", "tokens", "audit", "schedules/[name]/audit"]));
  });

  it.each(routes)("/api/%s refuses an anonymous non-loopback client with 403 and instructions", async (route) => {
    const mod = await load(route);
    for (const method of METHODS.filter((m) => typeof mod[m] === "function")) {
      const res = await call(route, method, { [PEER_HEADER]: "203.0.113.7", origin: "http://localhost:3000" });
      expect(res.status, `${method} /api/${route}`).toBe(403);
      expect(((await res.json()) as { error: { message: string } }).error.message).toContain("SLOTKEEPER_OPERATOR_PASSWORD");
    }
  });

  it.each(routes)("/api/%s refuses a viewer's mutation, a cross-origin one and a non-JSON body", async (route) => {
    const mod = await load(route);
    for (const method of METHODS.filter((m) => MUTATING.has(m) && typeof mod[m] === "function")) {
      const asViewer = await call(route, method, { authorization: `Bearer ${viewerToken}`, "content-type": "application/json" }, "{}");
      expect(asViewer.status, `viewer ${method} /api/${route}`).toBe(403);
      const crossOrigin = await call(route, method, { origin: "http://evil.example", "sec-fetch-site": "cross-site", "content-type": "application/json" }, "{}");
      expect(crossOrigin.status, `cross-origin ${method} /api/${route}`).toBe(403);
      const form = await call(route, method, { origin: "http://localhost:3000", "content-type": "application/x-www-form-urlencoded" }, "a=1");
      expect(form.status, `form body ${method} /api/${route}`).toBe(400);
    }
  });

  it.each(routes)("/api/%s accepts a loopback GET", async (route) => {
    const mod = await load(route);
    if (typeof mod.GET !== "function") return;
    const res = await call(route, "GET", { [PEER_HEADER]: "127.0.0.1" });
    expect([200, 404], `GET /api/${route}`).toContain(res.status);
  });
});

describe("tokens", () => {
  it("work from anywhere until revoked, and are never listed with their secret", async () => {
    const remote = { [PEER_HEADER]: "203.0.113.7", authorization: `Bearer ${operatorToken}` };
    const me = await call("me", "GET", remote);
    expect(await me.json()).toEqual({ actor: { name: "token:ci-operator", kind: "token", role: "operator" }, access: "loopback-only" });

    const list = await call("tokens", "GET", {});
    const text = await list.text();
    expect(text).not.toContain(operatorToken);
    const id = (JSON.parse(text) as { tokens: { id: number; name: string; lastUsedAt: string | null }[] }).tokens.find((t) => t.name === "ci-operator")!;
    expect(id.lastUsedAt).not.toBeNull();

    // A token cannot mint or revoke tokens.
    expect((await call("tokens", "POST", { ...remote, "content-type": "application/json" }, JSON.stringify({ name: "x", role: "viewer" }))).status).toBe(403);

    const { POST: revoke } = await import("./tokens/[id]/revoke/route");
    const res = await revoke(new Request(`http://localhost/api/tokens/${id.id}/revoke`, { method: "POST", headers: { origin: "http://localhost" } }), { params: Promise.resolve({ id: String(id.id) }) });
    expect(res.status).toBe(200);
    const after = await call("me", "GET", remote);
    expect(after.status).toBe(401);
  });

  it("refuses unknown fields and bad roles", async () => {
    const bad = async (body: unknown) => (await call("tokens", "POST", { "content-type": "application/json" }, JSON.stringify(body))).json() as Promise<{ error: { field?: string } }>;
    expect((await bad({ name: "a", role: "viewer", admin: true })).error.field).toBe("admin");
    expect((await bad({ name: "a", role: "root" })).error.field).toBe("role");
    expect((await bad({ name: "", role: "viewer" })).error.field).toBe("name");
  });
});

describe("audit", () => {
  it("records token mutations with who and what, filterable, paginated newest first", async () => {
    const page1 = await call("audit", "GET", {});
    const body = (await page1.json()) as { entries: { action: string; actor: string; actorKind: string }[] };
    expect(body.entries.map((e) => e.action)).toEqual(expect.arrayContaining(["token.create", "token.revoke"]));
    expect(body.entries[0]).toMatchObject({ action: "token.revoke", actor: "local", actorKind: "local" });

    const mod = (await import("./audit/route")) as unknown as Record<string, Handler>;
    const get = (q: string) => mod.GET(new Request(`http://localhost/api/audit?${q}`), params);
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
    const mod = await import("./audit/route");
    expect(Object.keys(mod).filter((k) => MUTATING.has(k))).toEqual([]);
  });
});
