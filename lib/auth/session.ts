/**
 * The console's session cookie. It carries only a random session id; the session itself (who,
 * which role, until when) is a row in PostgreSQL (lib/auth/sessions.ts), so signing out, a
 * password change or an admin's disable ends it at once, wherever the cookie was copied to.
 */

/** The cookie's name over plain http (localhost). */
export const SESSION_COOKIE = "sk_session";
/**
 * The cookie's name over https: the `__Host-` prefix makes the browser refuse it unless it is
 * Secure, Path=/ and has no Domain, so no sibling subdomain or plain-http page can plant one.
 */
export const SECURE_SESSION_COOKIE = "__Host-sk_session";

/** Whether the browser reached us over https (directly, or through a trusted proxy that says so). */
export function overHttps(req: Request, settings: { trustProxy: boolean }): boolean {
  return new URL(req.url).protocol === "https:" || (settings.trustProxy && req.headers.get("x-forwarded-proto") === "https");
}

/**
 * The session id a request carries, or undefined: over https only `__Host-sk_session` counts (a
 * plain `sk_session` could have been planted by a sibling host or a plain-http page), over http
 * only `sk_session`.
 */
export function readSessionCookie(req: Request, settings: { trustProxy: boolean }): string | undefined {
  return readCookie(req.headers.get("cookie"), overHttps(req, settings) ? SECURE_SESSION_COOKIE : SESSION_COOKIE);
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

/**
 * A Set-Cookie header for the session: httpOnly, SameSite=Strict, Path=/, no Domain; over https
 * named `__Host-sk_session` and Secure.
 */
export function sessionCookieHeader(value: string, opts: { maxAgeSeconds: number; secure: boolean }): string {
  const name = opts.secure ? SECURE_SESSION_COOKIE : SESSION_COOKIE;
  return [`${name}=${value}`, "Path=/", "HttpOnly", "SameSite=Strict", `Max-Age=${Math.max(0, Math.floor(opts.maxAgeSeconds))}`, ...(opts.secure ? ["Secure"] : [])].join("; ");
}
