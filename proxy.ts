import { NextResponse, type NextRequest } from "next/server";
import { loopbackRefusal } from "./lib/auth/access";
import { readSessionCookie } from "./lib/auth/session";
import { getAccessSettings } from "./lib/auth/settings";
import { API_CSP, contentSecurityPolicy } from "./lib/security/csp";

/**
 * Runs before every page request (Node runtime, Next 16's default for proxy):
 * - loopback-only mode: refuse other clients with 403 and instructions;
 * - credentials mode: send pages without a session cookie to /login (whether the session still
 *   holds is the API's to say: a page whose session ended gets 401 from its first API call, and the
 *   console then goes to /login — lib/client/api.ts);
 * - pages get a fresh CSP nonce, which Next.js puts on its own scripts; the refusal and the
 *   redirect, which render nothing, get the policy that lets nothing load (every response has one).
 *
 * API routes are not matched: each one decides access itself (lib/server/route.ts, and
 * app/api/access.test.ts checks that every route does), and a request that runs proxy has its
 * whole body read and buffered by Next.js first (up to proxyClientMaxBodySize) — which would
 * defeat the API's own body limit, refused with 413 while reading (readBodyText).
 */
export function proxy(request: NextRequest) {
  const settings = getAccessSettings();
  const path = request.nextUrl.pathname;

  if (settings.mode === "loopback-only") {
    const refusal = loopbackRefusal(request, settings);
    if (refusal) return new Response(`403 Forbidden\n\n${refusal}\n`, { status: 403, headers: { "content-type": "text/plain; charset=utf-8", "content-security-policy": API_CSP } });
  }

  if (settings.mode === "credentials" && path !== "/login") {
    if (!readSessionCookie(request, settings)) {
      const url = request.nextUrl.clone();
      url.pathname = "/login";
      url.search = `?next=${encodeURIComponent(path + request.nextUrl.search)}`;
      const redirect = NextResponse.redirect(url);
      redirect.headers.set("content-security-policy", API_CSP);
      return redirect;
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
  matcher: ["/((?!api/|api$|_next/static|_next/image|favicon.ico).*)"],
};
