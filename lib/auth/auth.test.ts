import { describe, expect, it } from "vitest";
import { resolveAccess, LOCAL_ACTOR } from "./access";
import { clientAddress, FORWARDED_HEADER, isLoopbackAddress, isLoopbackHost, OUTBOUND_MARKER, PEER_HEADER } from "./client-address";
import { checkLogin, secretsEqual } from "./passwords";
import { readCookie, readSessionCookie, SECURE_SESSION_COOKIE, SESSION_COOKIE, sessionCookieHeader } from "./session";
import { loadAccessSettings } from "./settings";

const loopbackOnly = loadAccessSettings({});
const withCreds = loadAccessSettings({ SLOTKEEPER_OPERATOR_PASSWORD: "op-password-1", SLOTKEEPER_VIEWER_PASSWORD: "viewer-password-1" });
const noTokens = async () => null;
const req = (headers: Record<string, string> = {}, url = "http://localhost:3000/api/x") => new Request(url, { headers });

describe("client address", () => {
  it("knows loopback addresses and names, in every spelling", () => {
    for (const a of ["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1", "[::1]"]) expect(isLoopbackAddress(a)).toBe(true);
    for (const a of ["10.0.0.5", "::ffff:10.0.0.5", "192.168.1.2", "0.0.0.0", "fe80::1", "128.0.0.1"]) expect(isLoopbackAddress(a)).toBe(false);
    for (const h of ["localhost:3000", "LOCALHOST", "app.localhost", "127.0.0.1:3100", "[::1]:3000"]) expect(isLoopbackHost(h)).toBe(true);
    for (const h of ["evil.example", "10.0.0.5:3000", "localhost.evil.example"]) expect(isLoopbackHost(h)).toBe(false);
  });

  it("takes the address the peer hook stamped from the socket", () => {
    expect(clientAddress(new Headers({ [PEER_HEADER]: "::ffff:127.0.0.1" }), { trustProxy: false })).toEqual({ address: "127.0.0.1", loopback: true });
    expect(clientAddress(new Headers({ [PEER_HEADER]: "203.0.113.7" }), { trustProxy: false }).loopback).toBe(false);
  });

  it("ignores a forged X-Forwarded-For and refuses a proxied request unless the proxy is trusted", () => {
    // A remote client claiming to be local: the socket says otherwise.
    const forged = new Headers({ [PEER_HEADER]: "203.0.113.7", [FORWARDED_HEADER]: "127.0.0.1", "x-forwarded-for": "127.0.0.1" });
    expect(clientAddress(forged, { trustProxy: false })).toEqual({ address: "203.0.113.7", loopback: false });
    // A reverse proxy on this machine: loopback socket, but the real client is elsewhere.
    const proxied = new Headers({ [PEER_HEADER]: "127.0.0.1", [FORWARDED_HEADER]: "203.0.113.7" });
    expect(clientAddress(proxied, { trustProxy: false }).loopback).toBe(false);
    expect(clientAddress(proxied, { trustProxy: true })).toEqual({ address: "203.0.113.7", loopback: false });
    // Trusted: the right-most entry (the proxy's) counts, not what the client put on the left.
    const spoofThroughProxy = new Headers({ [PEER_HEADER]: "127.0.0.1", [FORWARDED_HEADER]: "127.0.0.1, 203.0.113.7" });
    expect(clientAddress(spoofThroughProxy, { trustProxy: true }).address).toBe("203.0.113.7");
  });

  it("fails closed inside a server when the stamp is missing, and treats in-process calls as local", () => {
    expect(clientAddress(new Headers(), { trustProxy: false, insideServer: true }).loopback).toBe(false);
    expect(clientAddress(new Headers(), { trustProxy: false, insideServer: false }).loopback).toBe(true);
  });
});

describe("session cookie", () => {
  it("is httpOnly and SameSite=Strict, named __Host-sk_session and Secure over https", () => {
    const h = sessionCookieHeader("abc", { maxAgeSeconds: 3600, secure: false });
    expect(h).toBe(`${SESSION_COOKIE}=abc; Path=/; HttpOnly; SameSite=Strict; Max-Age=3600`);
    expect(sessionCookieHeader("abc", { maxAgeSeconds: 1, secure: true })).toBe(`${SECURE_SESSION_COOKIE}=abc; Path=/; HttpOnly; SameSite=Strict; Max-Age=1; Secure`);
    expect(sessionCookieHeader("abc", { maxAgeSeconds: 1, secure: true })).not.toContain("Domain");
    expect(readCookie(`a=1; ${SESSION_COOKIE}=xyz; b=2`, SESSION_COOKIE)).toBe("xyz");
    const both = { cookie: `a=1; ${SECURE_SESSION_COOKIE}=sec; ${SESSION_COOKIE}=plain` };
    expect(readSessionCookie(req(both, "https://console.example/api/me"), { trustProxy: false })).toBe("sec");
    expect(readSessionCookie(req(both), { trustProxy: false })).toBe("plain");
    // Over https a plain sk_session (planted by a sibling host or a plain-http page) does not count.
    expect(readSessionCookie(req({ cookie: `${SESSION_COOKIE}=plain` }, "https://console.example/api/me"), { trustProxy: false })).toBeUndefined();
    // Behind a trusted proxy, its X-Forwarded-Proto says https.
    expect(readSessionCookie(req({ ...both, "x-forwarded-proto": "https" }), { trustProxy: true })).toBe("sec");
    expect(readSessionCookie(req({ ...both, "x-forwarded-proto": "https" }), { trustProxy: false })).toBe("plain");
  });
});

describe("settings", () => {
  it("is loopback-only without a password and names a bad variable", () => {
    expect(loopbackOnly.mode).toBe("loopback-only");
    expect(withCreds.mode).toBe("credentials");
    expect(() => loadAccessSettings({ SLOTKEEPER_VIEWER_PASSWORD: "viewer-password-1" })).toThrow(/SLOTKEEPER_VIEWER_PASSWORD/);
    expect(() => loadAccessSettings({ SLOTKEEPER_OPERATOR_PASSWORD: "short" })).toThrow(/SLOTKEEPER_OPERATOR_PASSWORD/);
    expect(() => loadAccessSettings({ SLOTKEEPER_OPERATOR_PASSWORD: "op-password-1", SLOTKEEPER_SESSION_HOURS: "x" })).toThrow(/SLOTKEEPER_SESSION_HOURS/);
  });
});

describe("passwords and throttling", () => {
  it("compares in constant time and picks the role by account", () => {
    expect(secretsEqual("a", "a")).toBe(true);
    expect(secretsEqual("a", "a-much-longer-string")).toBe(false);
    expect(checkLogin(withCreds, "operator", "op-password-1")).toBe("admin");
    expect(checkLogin(withCreds, "viewer", "viewer-password-1")).toBe("viewer");
    expect(checkLogin(withCreds, "viewer", "op-password-1")).toBeNull();
    expect(checkLogin(withCreds, "admin", "op-password-1")).toBeNull();
    expect(checkLogin(loadAccessSettings({ SLOTKEEPER_OPERATOR_PASSWORD: "op-password-1" }), "viewer", "\0unset")).toBeNull();
  });
});

describe("resolveAccess", () => {
  it("lets loopback in as the local operator and tells others how to configure access", async () => {
    expect(await resolveAccess(req({ [PEER_HEADER]: "127.0.0.1" }), loopbackOnly, noTokens)).toEqual({ actor: LOCAL_ACTOR, credential: "loopback" });
    await expect(resolveAccess(req({ [PEER_HEADER]: "203.0.113.7" }), loopbackOnly, noTokens)).rejects.toMatchObject({ kind: "forbidden", message: expect.stringContaining("SLOTKEEPER_OPERATOR_PASSWORD") });
  });

  it("never takes Slotkeeper's own outbound requests for the local operator, whatever their address", async () => {
    for (const peer of ["127.0.0.1", "::1", "::ffff:127.0.0.1"]) {
      for (const marker of ["http-handler", "alert", ""]) {
        await expect(resolveAccess(req({ [PEER_HEADER]: peer, [OUTBOUND_MARKER]: marker }), loopbackOnly, noTokens)).rejects.toMatchObject({
          kind: "forbidden",
          message: expect.stringMatching(/^Refused: the request was sent by Slotkeeper itself/),
        });
      }
    }
    // An API token still works from there: that is how a schedule may call this API on purpose.
    const tokens = async (t: string) => (t === "skt_good" ? { name: "token:ci", kind: "token" as const, role: "operator" as const } : null);
    expect((await resolveAccess(req({ [PEER_HEADER]: "127.0.0.1", [OUTBOUND_MARKER]: "http-handler", authorization: "Bearer skt_good" }), loopbackOnly, tokens)).credential).toBe("bearer");
  });

  it("refuses a DNS-rebound request: loopback socket, foreign Host", async () => {
    await expect(resolveAccess(req({ [PEER_HEADER]: "127.0.0.1", host: "evil.example" }), loopbackOnly, noTokens)).rejects.toMatchObject({ kind: "forbidden" });
  });

  it("needs a valid session in credentials mode, even from loopback", async () => {
    await expect(resolveAccess(req({ [PEER_HEADER]: "127.0.0.1" }), withCreds, noTokens)).rejects.toMatchObject({ kind: "unauthorized" });
    const sessions = async (id: string) => (id === "good-session" ? { name: "viewer", kind: "user" as const, role: "viewer" as const } : null);
    const a = await resolveAccess(req({ cookie: `${SESSION_COOKIE}=good-session` }), withCreds, noTokens, sessions);
    expect(a).toEqual({ actor: { name: "viewer", kind: "user", role: "viewer" }, credential: "cookie" });
    await expect(resolveAccess(req({ cookie: `${SESSION_COOKIE}=ended-session` }), withCreds, noTokens, sessions)).rejects.toMatchObject({ kind: "unauthorized" });
  });

  it("accepts a known bearer token from anywhere and refuses an unknown one or another scheme", async () => {
    const tokens = async (t: string) => (t === "skt_good" ? { name: "token:ci", kind: "token" as const, role: "viewer" as const } : null);
    const remote = { [PEER_HEADER]: "203.0.113.7" };
    expect((await resolveAccess(req({ ...remote, authorization: "Bearer skt_good" }), loopbackOnly, tokens)).credential).toBe("bearer");
    await expect(resolveAccess(req({ ...remote, authorization: "Bearer skt_bad" }), loopbackOnly, tokens)).rejects.toMatchObject({ kind: "unauthorized" });
    await expect(resolveAccess(req({ authorization: "Basic b3A6cGFzcw==" }), loopbackOnly, tokens)).rejects.toMatchObject({ kind: "unauthorized" });
  });
});
