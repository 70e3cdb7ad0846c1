import "server-only";
import { recordAudit, type Actor } from "../audit/record";
import { AppError } from "../errors";
import { getDb, getLog } from "../server/db";
import { readJson } from "../server/route";
import { checkMutationRequest } from "../security/csrf";
import { clientAddress } from "./client-address";
import { ACCOUNTS, checkLogin } from "./passwords";
import { authenticatePerson } from "./people";
import { overHttps, readSessionCookie, sessionCookieHeader } from "./session";
import { createSession, deleteAccountSessions, deletePersonSessions, deleteSession, findSessionActor, type SessionOwner } from "./sessions";
import { getAccessSettings, type AccessSettings } from "./settings";
import { recordLoginFailure, recordLoginSuccess, throttleWaitMs } from "./throttle";

/**
 * Run a step of the sign-in throttle. It fails closed: when the counts cannot be read or stored
 * (lib/auth/throttle.ts), the sign-in is refused with 503 saying so, never let through unthrottled.
 */
async function throttled<T>(what: "read" | "store", step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    getLog().error({ event: "auth:login:throttle", step: what, err });
    throw new AppError("unavailable", `sign-in is unavailable: the failed sign-in counts could not be ${what === "read" ? "read" : "stored"}; try again shortly`);
  }
}

/** Open a session for `owner` and the Set-Cookie header that hands it to the browser. */
export async function openSession(req: Request, settings: AccessSettings, owner: SessionOwner): Promise<string> {
  const id = await createSession(getDb(), owner, settings.sessionHours);
  return sessionCookieHeader(id, { maxAgeSeconds: settings.sessionHours * 3600, secure: overHttps(req, settings) });
}

/** Who a (user, password) pair is: an environment account (operator, viewer) or a person. */
async function authenticate(settings: AccessSettings, user: string, password: string): Promise<SessionOwner | null> {
  if ((ACCOUNTS as readonly string[]).includes(user)) {
    const role = checkLogin(settings, user, password);
    return role ? { account: user, role, personId: null, envPassword: password } : null;
  }
  const person = await authenticatePerson(getDb(), user, password);
  return person ? { account: person.name, role: person.role, personId: person.id } : null;
}

/**
 * POST /api/auth/login `{ user, password }`: check the password (the environment accounts in
 * constant time, people's scrypt hashes), slow repeated failures per client address and per
 * account (lib/auth/throttle.ts, counted in the database so every web process shares them; 429
 * with Retry-After), and open a session.
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

  const attempt = { address: clientAddress(req.headers, settings).address, account: user };
  const waitMs = await throttled("read", () => throttleWaitMs(getDb(), attempt));
  if (waitMs > 0) {
    const seconds = Math.ceil(waitMs / 1000);
    return Response.json({ error: { code: "rate_limited", message: `too many failed sign-ins; try again in ${seconds} s` } }, { status: 429, headers: { "retry-after": String(seconds) } });
  }
  const owner = await authenticate(settings, user, password);
  if (!owner) {
    await throttled("store", () => recordLoginFailure(getDb(), attempt));
    getLog().warn({ event: "auth:login:failed", user: user.slice(0, 100), client: attempt.address ?? "unknown" });
    throw new AppError("unauthorized", "wrong user or password", "password");
  }
  await recordLoginSuccess(getDb(), attempt);
  const cookie = await openSession(req, settings, owner);
  const actor: Actor = { name: owner.account, kind: "user", role: owner.role, ...(owner.personId !== null ? { personId: owner.personId } : {}) };
  await recordAudit(getDb(), actor, { action: "auth.login", targetType: "system", after: { role: owner.role } });
  return Response.json({ actor: { name: actor.name, kind: actor.kind, role: actor.role } }, { headers: { "set-cookie": cookie, "cache-control": "no-store" } });
}

/**
 * POST /api/auth/logout: delete this session's row and clear the cookie. With `?everywhere=1`,
 * delete every session of the same person (or environment account). Audited either way, as who
 * signed out (a cookie that names no live session ends nothing and writes nothing).
 */
export async function logout(req: Request): Promise<Response> {
  const settings = getAccessSettings();
  checkMutationRequest(req, "loopback", settings);
  const id = readSessionCookie(req, settings);
  const everywhere = ["1", "true"].includes(new URL(req.url).searchParams.get("everywhere") ?? "");
  if (id) {
    const db = getDb();
    const actor = await findSessionActor(db, id, { operator: settings.operatorPassword, viewer: settings.viewerPassword });
    if (actor && everywhere) {
      await db.transaction(async (tx) => {
        const ended = actor.personId !== undefined ? await deletePersonSessions(tx, actor.personId) : await deleteAccountSessions(tx, actor.name);
        await recordAudit(tx, actor, { action: "auth.logout_everywhere", targetType: "system", after: { signedOut: ended } });
      });
    } else if (actor) {
      await db.transaction(async (tx) => {
        await deleteSession(tx, id);
        await recordAudit(tx, actor, { action: "auth.logout", targetType: "system" });
      });
    } else {
      await deleteSession(db, id);
    }
  }
  return new Response(null, { status: 204, headers: { "set-cookie": sessionCookieHeader("", { maxAgeSeconds: 0, secure: overHttps(req, settings) }), "cache-control": "no-store" } });
}
