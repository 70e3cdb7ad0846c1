import { describe, expect, it } from "vitest";
import { contentSecurityPolicy } from "./csp";
import { checkMutationRequest } from "./csrf";
import { containsMask, jsonMayReferToEnv, MASK, maskSecrets, resolveEnvRefs, restoreMasked } from "./mask";

const post = (headers: Record<string, string>, body?: string) => new Request("http://localhost:3000/api/schedules/x/pause", { method: "POST", headers, body });
const check = (r: Request, credential: "bearer" | "cookie" | "loopback") => () => checkMutationRequest(r, credential, { trustProxy: false });
const same = { origin: "http://localhost:3000", "sec-fetch-site": "same-origin" };

describe("checkMutationRequest", () => {
  it("accepts a same-origin console request with or without a JSON body", () => {
    expect(check(post(same), "cookie")).not.toThrow();
    expect(check(post({ ...same, "content-type": "application/json" }, "{}"), "cookie")).not.toThrow();
  });

  it("refuses cross-site requests by Origin or Sec-Fetch-Site", () => {
    expect(check(post({ origin: "http://evil.example" }), "loopback")).toThrow(/cross-origin/);
    expect(check(post({ origin: "http://localhost:3001" }), "cookie")).toThrow(/cross-origin/);
    expect(check(post({ ...same, "sec-fetch-site": "cross-site" }), "cookie")).toThrow(/Sec-Fetch-Site/);
    expect(check(post({ ...same, "sec-fetch-site": "same-site" }), "loopback")).toThrow(/Sec-Fetch-Site/);
  });

  it("refuses a missing or null Origin on cookie requests; lets scripts on loopback omit it", () => {
    expect(check(post({}), "cookie")).toThrow(/Origin/);
    expect(check(post({ origin: "null" }), "cookie")).toThrow(/null/);
    expect(check(post({ origin: "null" }), "loopback")).toThrow(/null/);
    expect(check(post({}), "loopback")).not.toThrow();
    expect(check(post({ "sec-fetch-site": "same-origin" }), "loopback")).toThrow(/Origin/);
  });

  it("exempts bearer tokens from Origin but not from JSON", () => {
    expect(check(post({ origin: "http://evil.example" }), "bearer")).not.toThrow();
    expect(check(post({ "content-type": "text/plain" }, "x"), "bearer")).toThrow(/JSON/);
  });

  it("refuses form and text bodies, which browsers send cross-site without a preflight", () => {
    for (const type of ["application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "text/plain", "application/jsonp"]) {
      expect(check(post({ ...same, "content-type": type }, "a=1"), "cookie")).toThrow(/JSON/);
    }
    expect(check(post({ ...same, "content-length": "3" }), "cookie")).toThrow(/json/i);
  });
});

describe("masking secrets", () => {
  const payload = {
    url: "https://example.test/hook",
    headers: { Authorization: "Bearer s3cr3t", "X-Api-Key": "k", Accept: "application/json" },
    auth: { password: "p", username: "u" },
    list: [{ name: "authorization", value: "Bearer x" }, { name: "accept", value: "*/*" }],
    token: { $env: "HOOK_TOKEN" },
  };

  it("masks sensitive keys at any depth and leaves the rest and env references alone", () => {
    const m = maskSecrets(payload);
    expect(m.headers).toEqual({ Authorization: MASK, "X-Api-Key": MASK, Accept: "application/json" });
    expect(m.auth).toEqual({ password: MASK, username: "u" });
    expect(m.list).toEqual([{ name: "authorization", value: MASK }, { name: "accept", value: "*/*" }]);
    expect(m.token).toEqual({ $env: "HOOK_TOKEN" });
    expect(JSON.stringify(m)).not.toMatch(/s3cr3t|Bearer x/);
    expect(payload.headers.Authorization).toBe("Bearer s3cr3t");
  });

  it("keeps a stored secret when an edit sends the mask back, and takes a new one when it does not", () => {
    const edited = { ...maskSecrets(payload), url: "https://example.test/other" };
    const restored = restoreMasked(edited, payload);
    expect(restored.headers.Authorization).toBe("Bearer s3cr3t");
    expect(restored.list[0].value).toBe("Bearer x");
    expect(restored.url).toBe("https://example.test/other");
    expect(restoreMasked({ headers: { Authorization: "Bearer new" } }, payload).headers.Authorization).toBe("Bearer new");
    expect(containsMask(restoreMasked({ headers: { Authorization: MASK } }, {}))).toBe(true);
  });

  it("resolves env references for the worker only", () => {
    expect(resolveEnvRefs({ a: { $env: "X" }, b: [{ $env: "X" }] }, { X: "v" })).toEqual({ a: "v", b: ["v"] });
    expect(() => resolveEnvRefs({ a: { $env: "MISSING" } }, {})).toThrow(/MISSING/);
  });

  it("tells from a payload's JSON text whether it may hold an env reference", () => {
    // "$env" as a plain value counts too: the check may say yes to a payload holding none, never no to one holding some.
    for (const payload of [{ a: { $env: "X" } }, [1, { b: [{ $env: "Y" }] }], { note: "$env" }]) expect(jsonMayReferToEnv(JSON.stringify(payload))).toBe(true);
    for (const payload of [{}, { $envelope: 1 }, { env: "X" }, [null, "x"]]) expect(jsonMayReferToEnv(JSON.stringify(payload))).toBe(false);
  });

  it("leaves the stored payload unchanged and copies only what held a reference", () => {
    const stored = { keep: { n: 1, list: [1, 2] }, secret: { nested: { $env: "X" } }, arr: ["a", { $env: "X" }] };
    const before = structuredClone(stored);
    const out = resolveEnvRefs(stored, { X: "v" });
    expect(out).toEqual({ keep: { n: 1, list: [1, 2] }, secret: { nested: "v" }, arr: ["a", "v"] });
    expect(stored).toEqual(before);
    expect(out.keep).toBe(stored.keep);
    const plain = { a: 1, b: [{ c: "d" }] };
    expect(resolveEnvRefs(plain, {})).toBe(plain);
  });
});

describe("content security policy", () => {
  it("runs only nonce'd scripts and can never be framed", () => {
    const csp = contentSecurityPolicy("abc", false);
    expect(csp).toContain("script-src 'self' 'nonce-abc' 'strict-dynamic'");
    expect(csp).not.toContain("unsafe-eval");
    expect(csp).toMatch(/script-src[^;]*'nonce-abc'/);
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("object-src 'none'");
  });
});
