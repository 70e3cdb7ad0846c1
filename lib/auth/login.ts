import "server-only";
import { recordAudit } from "../audit/record";
import { AppError } from "../errors";
import { getDb, getLog } from "../server/db";
import { readJson } from "../server/route";
import { checkMutationRequest } from "../security/csrf";
import { clientAddress } from "./client-address";
import { checkLogin } from "./passwords";
import { sessionCookieHeader, signSession } from "./session";
import { getAccessSettings } from "./settings";
import { LoginThrottle } from "./throttle";

const g = globalThis as { __slotkeeperLoginThrottle?: LoginThrottle };
const throttle = (g.__slotkeeperLoginThrottle ??= new LoginThrottle());

/** Whether the session cookie should carry Secure: when the browser reached us over https. */
function overHttps(req: Request): boolean {
  return new URL(req.url).protocol === "https:" || (getAccessSettings().trustProxy && req.headers.get("x-forwarded-proto") === "https");
}

/**
 * POST /api/auth/login `{ user, password }`: check the password in constant time, slow repeated
 * failures per client address and per account, and set the signed session cookie.
 */
export async function login(req: Request): Promise<Response> {
  const settings = getAccessSettings();
  if (settings.mode !== "credentials") throw new AppError("conflict", "no credentials are configured; this console is open to loopback clients only");
  // Login CSRF: a signed-in cookie must only come from the console's own pages.
  checkMutationRequest(req, "loopback", settings);
  const body = await readJson(req, 4096);
  const { user, password } = (body ?? {}) as { user?: unknown; password?: unknown };
  if (typeof user !== "string" || !user || user.length > 100) throw new AppError("invalid", "user is required", "user");
  if (typeof password !== "string" || !password || password.length > 1024) throw new AppError("invalid", "password is required", "password");

  const keys = [`ip:${clientAddress(req.headers, settings).address ?? "unknown"}`, `user:${user}`];
  const waitMs = throttle.waitMs(keys);
  if (waitMs > 0) {
    const seconds = Math.ceil(waitMs / 1000);
    return Response.json({ error: { code: "rate_limited", message: `too many failed sign-ins; try again in ${seconds} s` } }, { status: 429, headers: { "retry-after": String(seconds) } });
  }
  const role = checkLogin(settings, user, password);
  if (!role) {
    throttle.fail(keys);
    getLog().warn({ event: "auth:login:failed", user: user.slice(0, 100), client: keys[0] });
    throw new AppError("unauthorized", "wrong user or password", "password");
  }
  throttle.succeed(keys);
  const maxAgeSeconds = settings.sessionHours * 3600;
  const cookie = signSession({ user, role, expiresAtMs: Date.now() + maxAgeSeconds * 1000 }, settings.sessionSecret);
  const actor = { name: user, kind: "user" as const, role };
  await recordAudit(getDb(), actor, { action: "auth.login", targetType: "system", after: { role } });
  return Response.json(
    { actor },
    { headers: { "set-cookie": sessionCookieHeader(cookie, { maxAgeSeconds, secure: overHttps(req) }), "cache-control": "no-store" } },
  );
}

/** POST /api/auth/logout: clear the session cookie (sessions are stateless; see lib/auth/session.ts). */
export async function logout(req: Request): Promise<Response> {
  checkMutationRequest(req, "loopback", getAccessSettings());
  return new Response(null, { status: 204, headers: { "set-cookie": sessionCookieHeader("", { maxAgeSeconds: 0, secure: overHttps(req) }), "cache-control": "no-store" } });
}
