import { createHmac, timingSafeEqual } from "node:crypto";
import { ROLES, type Role } from "./scopes";

/** Name of the console's session cookie. */
export const SESSION_COOKIE = "sk_session";

/** What a session cookie says: who, which role, until when (ms since the epoch). */
export type Session = { user: string; role: Role; expiresAtMs: number };

const b64 = (b: Buffer | string) => Buffer.from(b).toString("base64url");

function mac(secret: Buffer, body: string): Buffer {
  return createHmac("sha256", secret).update(`sk-session-v1.${body}`).digest();
}

/**
 * Encode a session as `<base64url json>.<base64url HMAC-SHA256>`. Stateless: logout clears the
 * cookie, and a copied cookie stays valid until it expires (SLOTKEEPER_SESSION_HOURS).
 */
export function signSession(s: Session, secret: Buffer): string {
  const body = b64(JSON.stringify({ u: s.user, r: s.role, e: s.expiresAtMs }));
  return `${body}.${b64(mac(secret, body))}`;
}

/** Decode and check a session cookie: null when forged, malformed or expired at `nowMs`. */
export function verifySession(value: string | undefined | null, secret: Buffer, nowMs = Date.now()): Session | null {
  if (!value || value.length > 4096) return null;
  const dot = value.indexOf(".");
  if (dot <= 0) return null;
  const body = value.slice(0, dot);
  const given = Buffer.from(value.slice(dot + 1), "base64url");
  const expected = mac(secret, body);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  try {
    const p = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as { u?: unknown; r?: unknown; e?: unknown };
    if (typeof p.u !== "string" || !(ROLES as readonly unknown[]).includes(p.r) || typeof p.e !== "number") return null;
    if (p.e <= nowMs) return null;
    return { user: p.u, role: p.r as Role, expiresAtMs: p.e };
  } catch {
    return null;
  }
}

/** The value of one cookie from a Cookie header, or undefined. */
export function readCookie(header: string | null, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** A Set-Cookie header for the session: httpOnly, SameSite=Strict, Path=/, Secure over https. */
export function sessionCookieHeader(value: string, opts: { maxAgeSeconds: number; secure: boolean }): string {
  return [`${SESSION_COOKIE}=${value}`, "Path=/", "HttpOnly", "SameSite=Strict", `Max-Age=${Math.max(0, Math.floor(opts.maxAgeSeconds))}`, ...(opts.secure ? ["Secure"] : [])].join("; ");
}
