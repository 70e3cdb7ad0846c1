import "server-only";
import { createHash, timingSafeEqual } from "node:crypto";
import { sql } from "drizzle-orm";
import * as client from "openid-client";
import { recordAudit, type Actor } from "../audit/record";
import { deleteExpiredOidcLogins } from "./oidc-logins";
import type { Db } from "../db/client";
import { getDb, getLog } from "../server/db";
import { requestHost } from "./access";
import { openSession } from "./login";
import { getOidcSettings, mapRole, type OidcSettings } from "./oidc-settings";
import { personNameSchema } from "./person-input";
import type { Role } from "./scopes";
import { overHttps, readCookie } from "./session";
import { getAccessSettings, type AccessSettings } from "./settings";

/**
 * Single sign-on with OpenID Connect: the authorization code flow with PKCE, state and nonce,
 * through openid-client (discovery, the code exchange, the ID token's signature and claims).
 *
 * - `GET /api/auth/oidc/start` keeps the state's sha256, the nonce and the PKCE verifier in
 *   `oidc_logins` (10 minutes by the database clock), puts the state in a short-lived HttpOnly
 *   cookie that ties the flow to this browser, and sends the browser to the provider.
 * - `GET /api/auth/oidc/callback` needs the cookie and the state to agree, deletes the row (so a
 *   state is good once), lets openid-client exchange the code and verify the ID token, maps the
 *   role claim to a role (SLOTKEEPER_OIDC_ROLE_MAP), creates or updates the person keyed by issuer
 *   and subject, and opens the same session a password sign-in opens.
 */

/** How long a started sign-in may take at the provider. */
const FLOW_SECONDS = 600;
const CALLBACK_PATH = "/api/auth/oidc";
const STATE_COOKIE = "sk_oidc_state";
/** Over https: `__Secure-` makes the browser refuse it unless Secure. */
const SECURE_STATE_COOKIE = "__Secure-sk_oidc_state";

const sha256 = (s: string) => createHash("sha256").update(s, "utf8").digest("hex");

/** Only a path on this console may be the target after sign-in (no open redirect). */
export function safeNextPath(next: string | null | undefined): string {
  return next && next.startsWith("/") && !next.startsWith("//") && !next.startsWith("/\\") && next.length <= 2000 ? next : "/";
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A small page of our own (no scripts): the answer to a browser that arrived by a redirect. */
function page(status: number, title: string, body: string, headers: HeadersInit = {}): Response {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} · Slotkeeper</title>${body}</html>`;
  const h = new Headers(headers);
  h.set("content-type", "text/html; charset=utf-8");
  h.set("cache-control", "no-store");
  h.set("content-security-policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'");
  return new Response(html, { status, headers: h });
}

/** A refused sign-in: the reason, and the way back to the sign-in page. */
function refusal(status: number, message: string, headers: HeadersInit = {}): Response {
  return page(
    status,
    "Sign-in refused",
    `</head><body style="font-family:sans-serif;max-width:40rem;margin:3rem auto"><h1>Sign-in refused</h1><p data-testid="oidc-error">${escapeHtml(message)}</p><p><a href="/login">Back to sign-in</a></p></body>`,
    headers,
  );
}

function stateCookieHeader(value: string, secure: boolean, maxAgeSeconds: number): string {
  return [`${secure ? SECURE_STATE_COOKIE : STATE_COOKIE}=${value}`, `Path=${CALLBACK_PATH}`, "HttpOnly", "SameSite=Lax", `Max-Age=${maxAgeSeconds}`, ...(secure ? ["Secure"] : [])].join("; ");
}

type Discovered = { key: string; config: Promise<client.Configuration> };
const g = globalThis as { __slotkeeperOidc?: Discovered };

/**
 * The provider's metadata and keys (discovery), fetched once per process and settings. A failed
 * discovery is forgotten, so the next sign-in tries again.
 */
export function providerConfig(oidc: OidcSettings): Promise<client.Configuration> {
  const key = [oidc.issuer.href, oidc.clientId, oidc.clientSecret ?? ""].join("\0");
  if (g.__slotkeeperOidc?.key !== key) {
    const auth = oidc.clientSecret ? client.ClientSecretBasic(oidc.clientSecret) : client.None();
    const config = client.discovery(oidc.issuer, oidc.clientId, { redirect_uris: [oidc.redirectUrl.href] }, auth, {
      ...(oidc.insecureLoopback ? { execute: [client.allowInsecureRequests] } : {}),
      timeout: 10,
    });
    const entry: Discovered = { key, config };
    config.catch(() => {
      if (g.__slotkeeperOidc === entry) g.__slotkeeperOidc = undefined;
    });
    g.__slotkeeperOidc = entry;
  }
  return g.__slotkeeperOidc!.config;
}

/** The settings when single sign-on is on (credentials mode and SLOTKEEPER_OIDC_ISSUER set), else null. */
export function oidcSettingsFor(settings: AccessSettings): OidcSettings | null {
  return settings.mode === "credentials" ? getOidcSettings(true) : null;
}

/** GET /api/auth/oidc/start?next=/path: remember the flow, send the browser to the provider. */
export async function oidcStart(req: Request): Promise<Response> {
  const settings = getAccessSettings();
  const oidc = oidcSettingsFor(settings);
  if (!oidc) return refusal(404, "Single sign-on is not configured on this console (SLOTKEEPER_OIDC_ISSUER is unset).");
  const url = new URL(req.url);
  const next = safeNextPath(url.searchParams.get("next"));
  // The state cookie must be set on the host the provider returns to, or the callback cannot see it.
  if (requestHost(req, settings).toLowerCase() !== oidc.redirectUrl.host.toLowerCase()) {
    return Response.redirect(`${oidc.redirectUrl.origin}${CALLBACK_PATH}/start?next=${encodeURIComponent(next)}`, 302);
  }
  let config: client.Configuration;
  try {
    config = await providerConfig(oidc);
  } catch (err) {
    getLog().error({ event: "auth:oidc:discovery", issuer: oidc.issuer.href, err });
    return refusal(502, `Could not reach the sign-in provider at ${oidc.issuer.href}: ${(err as Error).message}`);
  }
  const state = client.randomState();
  const nonce = client.randomNonce();
  const verifier = client.randomPKCECodeVerifier();
  const db = getDb();
  // Abandoned sign-ins go here too (and in the worker's retention sweep), so the table stays small.
  await deleteExpiredOidcLogins(db);
  await db.execute(sql`
    INSERT INTO oidc_logins (state_hash, nonce, code_verifier, next_path, created_at, expires_at)
    VALUES (${sha256(state)}, ${nonce}, ${verifier}, ${next}, sk_now(), sk_now() + make_interval(secs => ${FLOW_SECONDS}))`);
  const target = client.buildAuthorizationUrl(config, {
    redirect_uri: oidc.redirectUrl.href,
    scope: oidc.scopes,
    state,
    nonce,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
  });
  return new Response(null, {
    status: 302,
    headers: { location: target.href, "set-cookie": stateCookieHeader(state, overHttps(req, settings), FLOW_SECONDS), "cache-control": "no-store" },
  });
}

/** Strings of a claim's value, for a refusal's message. */
function describeClaim(value: unknown): string {
  const values = (Array.isArray(value) ? value : [value]).filter((v) => typeof v === "string" || typeof v === "number").map(String);
  return values.length ? values.map((v) => JSON.stringify(v.slice(0, 100))).slice(0, 10).join(", ") : "none";
}

/** A login name from the provider's claims: preferred_username, else the e-mail, else the subject, made to fit the name rules. */
function nameCandidates(issuer: string, subject: string, claims: Record<string, unknown>): string[] {
  const raw = [claims.preferred_username, claims.email, subject].find((v): v is string => typeof v === "string" && v.trim() !== "") ?? subject;
  const cleaned = raw.replace(/[^A-Za-z0-9._@-]+/g, "-").replace(/^[^A-Za-z0-9]+/, "").slice(0, 56) || "sso";
  const tag = sha256(`${issuer}\0${subject}`).slice(0, 6);
  return [cleaned, `${cleaned}-${tag}`].filter((n) => personNameSchema.safeParse(n).success);
}

type OidcPerson = { id: number; name: string; role: Role; created: boolean; roleBefore: Role | null };

/**
 * Find the person with this issuer and subject, or create one, and give them `role` (the
 * provider's claim decides it at every sign-in). Null when the person is disabled. A new person
 * never takes a name already in use: the name then carries a tag of the subject.
 */
export async function upsertOidcPerson(db: Db, issuer: string, subject: string, role: Role, claims: Record<string, unknown>): Promise<OidcPerson | null> {
  const displayName = typeof claims.name === "string" ? claims.name.replace(/[\u0000-\u001f\u007f]/g, "").trim().slice(0, 100) || null : null;
  return db.transaction(async (tx) => {
    const find = async () => {
      const { rows } = await tx.execute<{ id: string; name: string; role: Role; disabled: boolean }>(
        sql`SELECT id, name, role, disabled_at IS NOT NULL AS disabled FROM people WHERE oidc_issuer = ${issuer} AND oidc_subject = ${subject} FOR UPDATE`,
      );
      return rows[0];
    };
    const existing = await find();
    if (existing) {
      if (existing.disabled) return null;
      await tx.execute(sql`UPDATE people SET role = ${role}, display_name = COALESCE(${displayName}, display_name) WHERE id = ${existing.id}`);
      return { id: Number(existing.id), name: existing.name, role, created: false, roleBefore: existing.role };
    }
    for (const name of nameCandidates(issuer, subject, claims)) {
      const { rows } = await tx.execute<{ id: string }>(sql`
        INSERT INTO people (name, display_name, role, password_hash, oidc_issuer, oidc_subject, created_at)
        VALUES (${name}, ${displayName}, ${role}, NULL, ${issuer}, ${subject}, sk_now())
        ON CONFLICT DO NOTHING RETURNING id`);
      if (rows[0]) {
        const person: OidcPerson = { id: Number(rows[0].id), name, role, created: true, roleBefore: null };
        const actor: Actor = { name, kind: "user", role, personId: person.id };
        await recordAudit(tx, actor, { action: "person.create", targetType: "person", targetId: name, after: { name, displayName, role, via: "oidc", issuer } });
        return person;
      }
    }
    throw new Error(`could not give the person ${subject} of ${issuer} a free login name`);
  });
}

/** GET /api/auth/oidc/callback?code=&state=: finish the sign-in the start route began. */
export async function oidcCallback(req: Request): Promise<Response> {
  const settings = getAccessSettings();
  const oidc = oidcSettingsFor(settings);
  if (!oidc) return refusal(404, "Single sign-on is not configured on this console (SLOTKEEPER_OIDC_ISSUER is unset).");
  const secure = overHttps(req, settings);
  const clearState = { "set-cookie": stateCookieHeader("", secure, 0) };
  const url = new URL(req.url);
  const params = url.searchParams;
  const log = getLog();

  const state = params.get("state");
  if (!state) return refusal(400, "The provider's answer carries no state, so it cannot be matched to a sign-in started here. Start again from the sign-in page.", clearState);
  const expected = readCookie(req.headers.get("cookie"), secure ? SECURE_STATE_COOKIE : STATE_COOKIE);
  if (!expected || expected.length !== state.length || !timingSafeEqual(Buffer.from(expected), Buffer.from(state))) {
    log.warn({ event: "auth:oidc:state", reason: expected ? "mismatch" : "no cookie" });
    return refusal(400, "This sign-in was not started in this browser, or its state does not match (open the console at the address SLOTKEEPER_OIDC_REDIRECT_URL names). Start again from the sign-in page.", clearState);
  }
  const db = getDb();
  const { rows } = await db.execute<{ nonce: string; code_verifier: string; next_path: string; live: boolean }>(
    sql`DELETE FROM oidc_logins WHERE state_hash = ${sha256(state)} RETURNING nonce, code_verifier, next_path, expires_at > sk_now() AS live`,
  );
  const flow = rows[0];
  if (!flow || !flow.live) return refusal(400, "This sign-in was already used or has expired (it lasts 10 minutes). Start again from the sign-in page.", clearState);

  const providerError = params.get("error");
  if (providerError) {
    const description = params.get("error_description");
    return refusal(403, `${oidc.name} refused the sign-in: ${providerError}${description ? ` (${description.slice(0, 300)})` : ""}.`, clearState);
  }
  if (!params.get("code")) return refusal(400, `${oidc.name} sent no authorization code. Start again from the sign-in page.`, clearState);

  let claims: Record<string, unknown>;
  try {
    const config = await providerConfig(oidc);
    // The URL the provider sent the browser to, as registered: behind a proxy req.url may name another host.
    const current = new URL(oidc.redirectUrl);
    current.search = url.search;
    const tokens = await client.authorizationCodeGrant(config, current, { pkceCodeVerifier: flow.code_verifier, expectedState: state, expectedNonce: flow.nonce, idTokenExpected: true });
    const idClaims = tokens.claims();
    if (!idClaims) throw new Error("the token response has no ID token");
    claims = { ...idClaims };
    // Providers often keep profile and group claims out of the ID token when an access token is issued.
    if (claims[oidc.roleClaim] === undefined && tokens.access_token) {
      const info = await client.fetchUserInfo(config, tokens.access_token, idClaims.sub);
      claims = { ...info, ...idClaims };
    }
  } catch (err) {
    log.warn({ event: "auth:oidc:exchange", err });
    return refusal(502, `The answer from ${oidc.name} could not be verified: ${(err as Error).message}. Start again from the sign-in page.`, clearState);
  }
  const subject = String(claims.sub);
  const role = mapRole(oidc, claims[oidc.roleClaim]);
  if (!role) {
    log.warn({ event: "auth:oidc:no-role", issuer: oidc.issuer.href, subject, claim: oidc.roleClaim });
    return refusal(
      403,
      `Your account at ${oidc.name} has no role in Slotkeeper: its ${oidc.roleClaim} claim (${describeClaim(claims[oidc.roleClaim])}) matches no entry of SLOTKEEPER_OIDC_ROLE_MAP. Ask an administrator to add you to a group that maps to a role.`,
      clearState,
    );
  }
  const issuer = String(claims.iss ?? oidc.issuer.href);
  const person = await upsertOidcPerson(db, issuer, subject, role, claims);
  if (!person) return refusal(403, "Your Slotkeeper account is disabled; an admin can enable it on Settings → People.", clearState);

  const sessionCookie = await openSession(req, settings, { account: person.name, role, personId: person.id });
  const actor: Actor = { name: person.name, kind: "user", role, personId: person.id };
  await recordAudit(db, actor, {
    action: "auth.login",
    targetType: "system",
    ...(person.roleBefore && person.roleBefore !== role ? { before: { role: person.roleBefore } } : {}),
    after: { role, via: "oidc", issuer },
  });
  // SameSite=Strict: a cookie set at the end of a redirect chain that began at the provider is not
  // sent on the chain's next hop. A page of our own that moves on makes that hop same-site.
  const next = escapeHtml(safeNextPath(flow.next_path));
  const headers = new Headers();
  headers.append("set-cookie", sessionCookie);
  headers.append("set-cookie", clearState["set-cookie"]);
  return page(200, "Signed in", `<meta http-equiv="refresh" content="0;url=${next}"></head><body><p>Signed in as ${escapeHtml(person.name)}. <a href="${next}">Continue</a></p></body>`, headers);
}
