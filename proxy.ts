import { NextResponse, type NextRequest } from "next/server";
import { loopbackRefusal } from "./lib/auth/access";
import { readCookie, SESSION_COOKIE, verifySession } from "./lib/auth/session";
import { getAccessSettings } from "./lib/auth/settings";
import { contentSecurityPolicy } from "./lib/security/csp";

/**
 * Runs before every page and API request (Node runtime, Next 16's default for proxy):
 * - loopback-only mode: refuse other clients with 403 and instructions (API routes check again in
 *   lib/server/route.ts; this also covers routes that do not use the wrappers);
 * - credentials mode: send pages without a valid session to /login (API routes answer 401 themselves);
 * - pages get a fresh CSP nonce, which Next.js puts on its own scripts.
 */
export function proxy(request: NextRequest) {
  const settings = getAccessSettings();
  const path = request.nextUrl.pathname;
  const isApi = path === "/api" || path.startsWith("/api/");
  // Liveness probes must work from anywhere; the answer is only up or down.
  if (path === "/api/health") return NextResponse.next();

  if (settings.mode === "loopback-only" && !(isApi && request.headers.has("authorization"))) {
    const refusal = loopbackRefusal(request, settings);
    if (refusal) {
      return isApi
        ? Response.json({ error: { code: "forbidden", message: refusal } }, { status: 403 })
        : new Response(`403 Forbidden\n\n${refusal}\n`, { status: 403, headers: { "content-type": "text/plain; charset=utf-8" } });
    }
  }
  if (isApi) return NextResponse.next();

  if (settings.mode === "credentials" && path !== "/login") {
    const session = verifySession(readCookie(request.headers.get("cookie"), SESSION_COOKIE), settings.sessionSecret);
    if (!session) {
      const url = request.nextUrl.clone();
      url.pathname = "/login";
      url.search = `?next=${encodeURIComponent(path + request.nextUrl.search)}`;
      return NextResponse.redirect(url);
    }
  }

  const nonce = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64");
  const csp = contentSecurityPolicy(nonce);
  const headers = new Headers(request.headers);
  headers.set("x-nonce", nonce);
  headers.set("content-security-policy", csp);
  const response = NextResponse.next({ request: { headers } });
  response.headers.set("content-security-policy", csp);
  return response;
}

export const config = {
  matcher: ["/((?!_next/static|_next/image|favicon.ico).*)"],
};
