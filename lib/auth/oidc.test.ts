// Single sign-on's callback against a real OpenID provider (oidc-provider on loopback) and a real
// database: a good sign-in, and the refusals (bad state, no code, no role, a replayed state).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as callbackRoute } from "@/app/api/auth/oidc/callback/route";
import { GET as startRoute } from "@/app/api/auth/oidc/start/route";
import { setupTestDatabase } from "@/lib/testing/db";
import { loginAtProvider, startTestProvider, type TestProvider } from "@/lib/testing/oidc-provider";
import { loadOidcSettings, mapRole, parseRoleMap } from "./oidc-settings";
import { authenticatePerson } from "./people";

const BASE = "http://localhost:3000";
const REDIRECT = `${BASE}/api/auth/oidc/callback`;
const tdb = setupTestDatabase({ poolSize: 4, routes: true, reset: false });
let provider: TestProvider;
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  provider = await startTestProvider({
    redirectUris: [REDIRECT],
    users: [
      { sub: "alice", username: "alice", name: "Alice Admin", groups: ["staff", "sk-admins"] },
      { sub: "mallory", username: "mallory", name: "Mallory", groups: ["contractors"] },
    ],
  });
  const env = {
    SLOTKEEPER_OPERATOR_PASSWORD: "test-operator-password",
    SLOTKEEPER_OIDC_ISSUER: provider.issuer,
    SLOTKEEPER_OIDC_CLIENT_ID: provider.clientId,
    SLOTKEEPER_OIDC_CLIENT_SECRET: provider.clientSecret,
    SLOTKEEPER_OIDC_REDIRECT_URL: REDIRECT,
    SLOTKEEPER_OIDC_SCOPES: "openid profile groups",
    SLOTKEEPER_OIDC_ROLE_MAP: "sk-admins=admin,sk-ops=operator,sk-view=viewer",
  };
  for (const [k, v] of Object.entries(env)) [saved[k], process.env[k]] = [process.env[k], v];
});

afterAll(async () => {
  for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k];
  else process.env[k] = v;
  await provider?.stop();
});

/** Start a sign-in: the provider's authorize URL and the state cookie the browser got. */
async function start() {
  const res = await startRoute(new Request(`${BASE}/api/auth/oidc/start?next=%2Fschedules`));
  expect(res.status).toBe(302);
  const location = new URL(res.headers.get("location")!);
  expect(location.origin).toBe(provider.issuer);
  expect(location.searchParams.get("code_challenge_method")).toBe("S256");
  expect(location.searchParams.get("nonce")).toBeTruthy();
  const cookie = res.headers.get("set-cookie")!.split(";")[0];
  expect(res.headers.get("set-cookie")).toMatch(/HttpOnly; SameSite=Lax/);
  return { location, cookie, state: location.searchParams.get("state")! };
}

const callback = (url: URL | string, cookie?: string) => callbackRoute(new Request(url, { headers: cookie ? { cookie } : {} }));

describe("OIDC sign-in against a real provider", () => {
  let used: { url: URL; cookie: string };

  it("signs a person in with the role their group maps to, keyed by issuer and subject, audited", async () => {
    const { location, cookie } = await start();
    const back = await loginAtProvider(location.href, "alice");
    expect(back.href.startsWith(REDIRECT)).toBe(true);
    const res = await callback(back, cookie);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('content="0;url=/schedules"');
    expect(res.headers.getSetCookie().some((c) => c.startsWith("sk_session=") && c.includes("SameSite=Strict"))).toBe(true);
    const person = await tdb.pool.query("SELECT name, role, display_name, password_hash, oidc_issuer, oidc_subject FROM people WHERE oidc_subject = 'alice'");
    expect(person.rows).toEqual([{ name: "alice", role: "admin", display_name: "Alice Admin", password_hash: null, oidc_issuer: provider.issuer, oidc_subject: "alice" }]);
    const sessions = await tdb.pool.query("SELECT s.account, s.role FROM sessions s JOIN people p ON p.id = s.person_id WHERE p.oidc_subject = 'alice'");
    expect(sessions.rows).toEqual([{ account: "alice", role: "admin" }]);
    const audit = await tdb.pool.query("SELECT actor FROM audit_log WHERE action = 'auth.login'");
    expect(audit.rows.map((r) => r.actor)).toContain("alice");
    used = { url: back, cookie };
  });

  it("refuses a replayed state: the same callback a second time", async () => {
    const res = await callback(used.url, used.cookie);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("already used or has expired");
    const sessions = await tdb.pool.query("SELECT count(*)::int AS n FROM sessions s JOIN people p ON p.id = s.person_id WHERE p.oidc_subject = 'alice'");
    expect(sessions.rows[0].n).toBe(1);
  });

  it("gives a person who signs in with the provider no password here", async () => {
    expect(await authenticatePerson(tdb.db, "alice", "any password at all")).toBeNull();
  });

  it("refuses a state that is not the one this browser started with", async () => {
    const { location, cookie } = await start();
    const back = await loginAtProvider(location.href, "alice");
    const forged = new URL(back);
    forged.searchParams.set("state", "not-the-state");
    const res = await callback(forged, cookie);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("state does not match");
    // And without the browser's state cookie (a callback link handed to someone else).
    const other = await callback(back);
    expect(other.status).toBe(400);
    expect(await other.text()).toContain("not started in this browser");
  });

  it("refuses a callback with no code", async () => {
    const { cookie, state } = await start();
    const res = await callback(`${REDIRECT}?state=${encodeURIComponent(state)}`, cookie);
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("sent no authorization code");
  });

  it("refuses a person whose groups map to no role, and creates no person", async () => {
    const { location, cookie } = await start();
    const back = await loginAtProvider(location.href, "mallory");
    const res = await callback(back, cookie);
    expect(res.status).toBe(403);
    const text = await res.text();
    expect(text).toContain("matches no entry of SLOTKEEPER_OIDC_ROLE_MAP");
    expect(text).toContain("&#34;contractors&#34;");
    expect((await tdb.pool.query("SELECT count(*)::int AS n FROM people WHERE oidc_subject = 'mallory'")).rows[0].n).toBe(0);
  });
});

describe("OIDC settings", () => {
  const base = { SLOTKEEPER_OIDC_ISSUER: "https://id.example", SLOTKEEPER_OIDC_CLIENT_ID: "sk", SLOTKEEPER_OIDC_ROLE_MAP: "a=admin,*=viewer" };

  it("derives the redirect URL from SLOTKEEPER_PUBLIC_URL and names the variable at fault", () => {
    expect(loadOidcSettings({ ...base, SLOTKEEPER_PUBLIC_URL: "https://sk.example/" }, true)?.redirectUrl.href).toBe("https://sk.example/api/auth/oidc/callback");
    expect(loadOidcSettings({}, true)).toBeNull();
    expect(() => loadOidcSettings({ SLOTKEEPER_OIDC_CLIENT_ID: "sk" }, true)).toThrow("invalid SLOTKEEPER_OIDC_CLIENT_ID: set SLOTKEEPER_OIDC_ISSUER too");
    expect(() => loadOidcSettings(base, false)).toThrow("invalid SLOTKEEPER_OIDC_ISSUER: set SLOTKEEPER_OPERATOR_PASSWORD too");
    expect(() => loadOidcSettings({ ...base, SLOTKEEPER_OIDC_ISSUER: "http://id.example" }, true)).toThrow("invalid SLOTKEEPER_OIDC_ISSUER: must be https://");
    expect(() => loadOidcSettings({ ...base, SLOTKEEPER_OIDC_ROLE_MAP: "a=root" }, true)).toThrow('invalid SLOTKEEPER_OIDC_ROLE_MAP: "a=root" names role "root"');
    expect(() => loadOidcSettings({ ...base, SLOTKEEPER_OIDC_ROLE_MAP: undefined }, true)).toThrow("invalid SLOTKEEPER_OIDC_ROLE_MAP: required");
  });

  it("maps the strongest matching role, the * role otherwise, or none", () => {
    const map = parseRoleMap("sk-ops=operator,sk-admins=admin,*=viewer");
    expect(mapRole(map, ["sk-ops", "sk-admins"])).toBe("admin");
    expect(mapRole(map, "sk-ops")).toBe("operator");
    expect(mapRole(map, ["other"])).toBe("viewer");
    expect(mapRole(parseRoleMap("sk-ops=operator"), undefined)).toBeNull();
  });
});
