// People, sessions and sign-in throttling through the real routes (as Next calls them) on a real
// database, with passwords configured (credentials mode). A session is proved ended by replaying
// the captured cookie and getting 401; what was written is read back from the tables.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PEER_HEADER } from "@/lib/auth/client-address";
import { deleteExpiredSessions, hashSessionId } from "@/lib/auth/sessions";
import { advanceClock, runClockFrom } from "@/lib/testing/clock";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";

type Handler = (req: Request, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;
const MODULES = import.meta.glob<Record<string, Handler>>("./**/route.ts");

const OPERATOR_PASSWORD = "env-operator-password";
const VIEWER_PASSWORD = "env-viewer-password";
const ORIGIN = "http://localhost";

let t: TestDatabase;
let nextAddress = 1;
/** A fresh client address per sign-in, so the throttle of one test never touches another. */
const address = () => `198.51.100.${nextAddress++}`;

async function call(route: string, method: string, opts: { cookie?: string; token?: string; body?: unknown; params?: Record<string, string>; query?: string; peer?: string; url?: string } = {}) {
  const mod = await MODULES[`./${route}/route.ts`]();
  const path = route.replace(/\[(\w+)\]/g, (_m, k: string) => encodeURIComponent(opts.params?.[k] ?? "x"));
  const headers: Record<string, string> = { origin: ORIGIN, [PEER_HEADER]: opts.peer ?? "203.0.113.50" };
  if (opts.cookie) headers.cookie = opts.cookie;
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  return mod[method](new Request(`${opts.url ?? ORIGIN}/api/${path}${opts.query ?? ""}`, { method, headers, body }), { params: Promise.resolve(opts.params ?? {}) });
}

/** Sign in and return the session cookie as a Cookie header value (`sk_session=…`). */
async function signIn(user: string, password: string, peer = address()): Promise<string> {
  const res = await call("auth/login", "POST", { body: { user, password }, peer });
  expect(res.status, `sign in as ${user}`).toBe(200);
  return res.headers.get("set-cookie")!.split(";")[0];
}

const me = async (cookie: string) => call("me", "GET", { cookie });
const meStatus = async (cookie: string) => (await me(cookie)).status;
const sessionRows = async (account: string) => Number((await t.pool.query<{ n: string }>("SELECT count(*) AS n FROM sessions WHERE account = $1", [account])).rows[0].n);
const peopleCount = async () => Number((await t.pool.query<{ n: string }>("SELECT count(*) AS n FROM people")).rows[0].n);

let admin = "";

beforeAll(async () => {
  t = await createTestDatabase({ poolSize: 4 });
  process.env.DATABASE_URL = t.url;
  process.env.SLOTKEEPER_OPERATOR_PASSWORD = OPERATOR_PASSWORD;
  process.env.SLOTKEEPER_VIEWER_PASSWORD = VIEWER_PASSWORD;
  await runClockFrom(t.pool, "2030-01-01T00:00:00Z");
  // The environment's operator bootstraps the first admin person.
  const op = await signIn("operator", OPERATOR_PASSWORD);
  const res = await call("people", "POST", { cookie: op, body: { name: "ada", displayName: "Ada L.", role: "admin", password: "ada-password-1" } });
  expect(res.status).toBe(201);
  admin = await signIn("ada", "ada-password-1");
});

afterAll(async () => {
  delete process.env.SLOTKEEPER_OPERATOR_PASSWORD;
  delete process.env.SLOTKEEPER_VIEWER_PASSWORD;
  const { closeDb } = await import("@/lib/server/db");
  await closeDb();
  await t.drop();
});

async function addPerson(name: string, role: string, password = `${name}-password-1`) {
  const res = await call("people", "POST", { cookie: admin, body: { name, role, password } });
  expect(res.status, `add ${name}`).toBe(201);
  return password;
}

describe("environment accounts", () => {
  it("sign in as before, in a server-side session that a password change ends", async () => {
    const op = await signIn("operator", OPERATOR_PASSWORD);
    expect(op).toMatch(/^sk_session=[A-Za-z0-9_-]{43}$/);
    expect(await (await me(op)).json()).toMatchObject({ actor: { name: "operator", kind: "user", role: "admin" }, access: "credentials" });
    const viewer = await signIn("viewer", VIEWER_PASSWORD);
    expect(await (await me(viewer)).json()).toMatchObject({ actor: { name: "viewer", role: "viewer" } });
    // The table holds the id's sha256, never the id itself.
    const id = op.split("=")[1];
    expect((await t.pool.query("SELECT 1 FROM sessions WHERE id_hash = $1", [hashSessionId(id)])).rowCount).toBe(1);
    expect((await t.pool.query("SELECT 1 FROM sessions WHERE id_hash = $1", [id])).rowCount).toBe(0);

    process.env.SLOTKEEPER_VIEWER_PASSWORD = "another-viewer-password";
    try {
      expect(await meStatus(viewer)).toBe(401);
      expect(await meStatus(op)).toBe(200);
    } finally {
      process.env.SLOTKEEPER_VIEWER_PASSWORD = VIEWER_PASSWORD;
    }
  });

  it("over https the cookie is __Host-sk_session, Secure, Path=/ and has no Domain", async () => {
    const res = await call("auth/login", "POST", { body: { user: "operator", password: OPERATOR_PASSWORD }, peer: address(), url: "https://localhost" });
    expect(res.status).toBe(200);
    const set = res.headers.get("set-cookie")!;
    expect(set).toMatch(/^__Host-sk_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200; Secure$/);
    const cookie = set.split(";")[0];
    expect((await call("me", "GET", { cookie, url: "https://localhost" })).status).toBe(200);
    // Each name counts only on its own scheme: a plain sk_session over https could have been planted.
    const plain = cookie.replace("__Host-sk_session=", "sk_session=");
    expect((await call("me", "GET", { cookie: plain, url: "https://localhost" })).status).toBe(401);
    expect(await meStatus(cookie)).toBe(401);
  });
});

describe("sessions end at once", () => {
  it("on sign-out: the replayed cookie is refused", async () => {
    const pw = await addPerson("bob", "operator");
    const cookie = await signIn("bob", pw);
    expect(await meStatus(cookie)).toBe(200);
    expect((await call("auth/logout", "POST", { cookie })).status).toBe(204);
    expect(await meStatus(cookie)).toBe(401);
    expect(await sessionRows("bob")).toBe(0);
  });

  it("everywhere: every session of the person, and no one else's", async () => {
    const pw = await addPerson("cara", "viewer");
    const laptop = await signIn("cara", pw);
    const phone = await signIn("cara", pw);
    expect(await sessionRows("cara")).toBe(2);
    expect((await call("auth/logout", "POST", { cookie: phone, query: "?everywhere=1" })).status).toBe(204);
    expect(await meStatus(laptop)).toBe(401);
    expect(await meStatus(phone)).toBe(401);
    expect(await meStatus(admin)).toBe(200);
    const audit = await t.pool.query("SELECT actor, after FROM audit_log WHERE action = 'auth.logout_everywhere'");
    expect(audit.rows).toEqual([{ actor: "cara", after: { signedOut: 2 } }]);
  });

  it("on the person's own password change: old cookies refused, the new one and the new password work", async () => {
    const pw = await addPerson("dev", "viewer");
    const other = await signIn("dev", pw);
    const here = await signIn("dev", pw);
    const wrong = await call("me/password", "POST", { cookie: here, body: { currentPassword: "not-it", newPassword: "dev-new-password" } });
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { error: { field: string } }).error.field).toBe("currentPassword");
    const short = await call("me/password", "POST", { cookie: here, body: { currentPassword: pw, newPassword: "short" } });
    expect(((await short.json()) as { error: { field: string } }).error.field).toBe("newPassword");
    expect(await meStatus(here)).toBe(200);

    const res = await call("me/password", "POST", { cookie: here, body: { currentPassword: pw, newPassword: "dev-new-password" } });
    expect(res.status).toBe(204);
    expect(await meStatus(other)).toBe(401);
    expect(await meStatus(here)).toBe(401);
    const fresh = res.headers.get("set-cookie")!.split(";")[0];
    expect(await meStatus(fresh)).toBe(200);
    expect((await call("auth/login", "POST", { body: { user: "dev", password: pw }, peer: address() })).status).toBe(401);
    await signIn("dev", "dev-new-password");
    const audit = await t.pool.query("SELECT actor, after FROM audit_log WHERE action = 'person.password'");
    expect(audit.rows).toEqual([{ actor: "dev", after: { changed: "password", signedOut: 2 } }]);
  });

  it("when an admin disables the person or resets their password", async () => {
    const pw = await addPerson("eve", "operator");
    const cookie = await signIn("eve", pw);
    const disable = await call("people/[name]", "PATCH", { cookie: admin, params: { name: "eve" }, body: { disabled: true } });
    expect(disable.status).toBe(200);
    expect(((await disable.json()) as { person: { disabledAt: string | null } }).person.disabledAt).not.toBeNull();
    expect(await meStatus(cookie)).toBe(401);
    expect((await call("auth/login", "POST", { body: { user: "eve", password: pw }, peer: address() })).status).toBe(401);
    // Enabled again, eve signs in; an admin's reset ends that session too.
    expect((await call("people/[name]", "PATCH", { cookie: admin, params: { name: "eve" }, body: { disabled: false } })).status).toBe(200);
    const again = await signIn("eve", pw);
    expect((await call("people/[name]", "PATCH", { cookie: admin, params: { name: "eve" }, body: { password: "eve-reset-password" } })).status).toBe(200);
    expect(await meStatus(again)).toBe(401);
    await signIn("eve", "eve-reset-password");
    const audit = await t.pool.query("SELECT actor, before, after FROM audit_log WHERE action = 'person.update' AND target_id = 'eve' ORDER BY id");
    expect(audit.rows).toEqual([
      { actor: "ada", before: { disabled: false }, after: { disabled: true, signedOut: 1 } },
      { actor: "ada", before: { disabled: true }, after: { disabled: false } },
      { actor: "ada", before: {}, after: { reset: "password", signedOut: 1 } },
    ]);
  });

  it("a role change applies to the open session at once", async () => {
    const pw = await addPerson("fay", "viewer");
    const cookie = await signIn("fay", pw);
    expect((await call("schedules", "POST", { cookie, body: { name: "fay-s", handler: "noop", everySeconds: 3600 } })).status).toBe(403);
    expect((await call("people/[name]", "PATCH", { cookie: admin, params: { name: "fay" }, body: { role: "operator" } })).status).toBe(200);
    expect(await (await me(cookie)).json()).toMatchObject({ actor: { name: "fay", role: "operator" } });
    expect((await call("schedules", "POST", { cookie, body: { name: "fay-s", handler: "noop", everySeconds: 3600 } })).status).toBe(201);
    // The audit log names the person.
    const audit = await t.pool.query("SELECT actor, actor_kind FROM audit_log WHERE action = 'schedule.create'");
    expect(audit.rows).toEqual([{ actor: "fay", actor_kind: "user" }]);
  });

  it("when they expire by the database clock, and the sweep deletes them", async () => {
    const pw = await addPerson("gus", "viewer");
    const cookie = await signIn("gus", pw);
    await advanceClock(t.pool, 12 * 3600_000 + 1_000);
    try {
      expect(await meStatus(cookie)).toBe(401);
      expect(await sessionRows("gus")).toBe(1);
      expect(await deleteExpiredSessions(t.db)).toBeGreaterThanOrEqual(1);
      expect(await sessionRows("gus")).toBe(0);
    } finally {
      await advanceClock(t.pool, -(12 * 3600_000 + 1_000));
    }
    // The sweep took every session that had expired then, the admin's too.
    expect(await meStatus(admin)).toBe(401);
    admin = await signIn("ada", "ada-password-1");
  });
});

describe("sign-in throttling", () => {
  it("answers 429 with Retry-After to a guessing address, while the real user signs in from a clean one", async () => {
    const pw = await addPerson("hal", "operator");
    const attacker = address();
    const tryAs = (password: string, peer: string) => call("auth/login", "POST", { body: { user: "hal", password }, peer });
    for (let i = 0; i < 5; i++) expect((await tryAs(`guess-${i}`, attacker)).status).toBe(401);
    const limited = await tryAs("guess-5", attacker);
    expect(limited.status).toBe(429);
    const retry = limited.headers.get("retry-after");
    expect(retry).toMatch(/^\d+$/);
    expect(Number(retry)).toBeGreaterThanOrEqual(1);
    expect(((await limited.json()) as { error: { code: string } }).error.code).toBe("rate_limited");
    // Even the right password waits while the address is throttled.
    expect((await tryAs(pw, attacker)).status).toBe(429);

    // The real user, from an address with no failures: straight in.
    const home = address();
    expect((await tryAs(pw, home)).status).toBe(200);
    // A second attacker address gets one wrong guess, then the account's count catches it.
    const second = address();
    expect((await tryAs("guess-x", second)).status).toBe(401);
    expect((await tryAs("guess-y", second)).status).toBe(429);
    // And the real user still gets in from home.
    expect((await tryAs(pw, home)).status).toBe(200);
  });
});

describe("sign-in throttling when its table cannot be used", () => {
  it("refuses the sign-in with 503 naming the throttle, opens no session, and works again once the table is back", async () => {
    const pw = await addPerson("kay", "operator");
    const peer = address();
    await t.pool.query("ALTER TABLE login_failures RENAME TO login_failures_away");
    try {
      for (const password of [pw, "a-wrong-one"]) {
        const res = await call("auth/login", "POST", { body: { user: "kay", password }, peer });
        expect(res.status).toBe(503);
        expect(((await res.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: "unavailable", message: expect.stringContaining("failed sign-in counts could not be read") });
      }
      expect(await sessionRows("kay")).toBe(0);
    } finally {
      await t.pool.query("ALTER TABLE login_failures_away RENAME TO login_failures");
    }
    expect((await call("auth/login", "POST", { body: { user: "kay", password: pw }, peer })).status).toBe(200);
  });
});

describe("people routes", () => {
  it("only admins list, add and change people", async () => {
    const opPw = await addPerson("ivy", "operator");
    const viewerPw = await addPerson("jon", "viewer");
    const operator = await signIn("ivy", opPw);
    const viewer = await signIn("jon", viewerPw);
    for (const cookie of [operator, viewer]) {
      expect((await call("people", "GET", { cookie })).status).toBe(403);
      expect((await call("people", "POST", { cookie, body: { name: "kim", role: "admin", password: "kim-password-1" } })).status).toBe(403);
      expect((await call("people/[name]", "PATCH", { cookie, params: { name: cookie === operator ? "ivy" : "jon" }, body: { role: "admin" } })).status).toBe(403);
    }
    expect((await t.pool.query("SELECT role FROM people WHERE name IN ('ivy', 'jon') ORDER BY name")).rows).toEqual([{ role: "operator" }, { role: "viewer" }]);
    expect((await t.pool.query("SELECT 1 FROM people WHERE name = 'kim'")).rowCount).toBe(0);

    const list = await call("people", "GET", { cookie: admin });
    expect(list.status).toBe(200);
    const text = await list.text();
    expect(text).not.toContain("scrypt");
    const people = (JSON.parse(text) as { people: { name: string; role: string; displayName: string | null }[] }).people;
    expect(people.find((p) => p.name === "ada")).toMatchObject({ role: "admin", displayName: "Ada L." });
    expect(people.find((p) => p.name === "ivy")).toMatchObject({ role: "operator" });
    // A display name is set and cleared; the login name stays.
    const named = await call("people/[name]", "PATCH", { cookie: admin, params: { name: "ivy" }, body: { displayName: "Ivy I." } });
    expect(((await named.json()) as { person: { displayName: string | null } }).person.displayName).toBe("Ivy I.");
    await call("people/[name]", "PATCH", { cookie: admin, params: { name: "ivy" }, body: { displayName: null } });
    expect((await t.pool.query("SELECT display_name, role FROM people WHERE name = 'ivy'")).rows).toEqual([{ display_name: null, role: "operator" }]);
    // The environment operator is an admin too.
    const op = await signIn("operator", OPERATOR_PASSWORD);
    expect((await call("people", "GET", { cookie: op })).status).toBe(200);
    // Any signed-in person changes their own password; a viewer too.
    expect((await call("me/password", "POST", { cookie: viewer, body: { currentPassword: viewerPw, newPassword: "jon-new-password" } })).status).toBe(204);
    // The environment accounts' passwords are not changed here.
    expect((await call("me/password", "POST", { cookie: op, body: { currentPassword: OPERATOR_PASSWORD, newPassword: "operator-new-password" } })).status).toBe(403);
  });

  it("refuses bad bodies with 400 naming the field, and writes nothing", async () => {
    const before = await peopleCount();
    const post = async (body: unknown) => {
      const res = await call("people", "POST", { cookie: admin, body });
      return { status: res.status, field: ((await res.json()) as { error?: { field?: string } }).error?.field };
    };
    expect(await post({ role: "viewer", password: "long-enough-pw" })).toEqual({ status: 400, field: "name" });
    expect(await post({ name: "has space", role: "viewer", password: "long-enough-pw" })).toEqual({ status: 400, field: "name" });
    expect(await post({ name: "operator", role: "viewer", password: "long-enough-pw" })).toEqual({ status: 400, field: "name" });
    expect(await post({ name: "lee", role: "root", password: "long-enough-pw" })).toEqual({ status: 400, field: "role" });
    expect(await post({ name: "lee", role: "viewer" })).toEqual({ status: 400, field: "password" });
    expect(await post({ name: "lee", role: "viewer", password: "short" })).toEqual({ status: 400, field: "password" });
    expect(await post({ name: "lee", role: "viewer", password: "long-enough-pw", admin: true })).toEqual({ status: 400, field: "admin" });
    expect(await post({ name: "lee", role: "viewer", password: "long-enough-pw", displayName: 5 })).toEqual({ status: 400, field: "displayName" });
    expect(await post({ name: "ada", role: "viewer", password: "long-enough-pw" })).toEqual({ status: 409, field: "name" });
    expect(await peopleCount()).toBe(before);

    const patch = async (name: string, body: unknown) => {
      const res = await call("people/[name]", "PATCH", { cookie: admin, params: { name }, body });
      return { status: res.status, field: ((await res.json()) as { error?: { field?: string } }).error?.field };
    };
    expect(await patch("ivy", { role: "root" })).toEqual({ status: 400, field: "role" });
    expect(await patch("ivy", { disabled: "yes" })).toEqual({ status: 400, field: "disabled" });
    expect(await patch("ivy", { password: "short" })).toEqual({ status: 400, field: "password" });
    expect(await patch("ivy", {})).toEqual({ status: 400, field: "body" });
    expect((await patch("nobody", { role: "viewer" })).status).toBe(404);
    // An admin cannot lock themselves out.
    expect(await patch("ada", { disabled: true })).toEqual({ status: 409, field: "disabled" });
    expect(await patch("ada", { role: "viewer" })).toEqual({ status: 409, field: "role" });
    expect((await t.pool.query("SELECT role, disabled_at FROM people WHERE name = 'ada'")).rows).toEqual([{ role: "admin", disabled_at: null }]);
    expect(await meStatus(admin)).toBe(200);
  });
});
