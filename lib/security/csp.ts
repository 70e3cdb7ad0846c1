/**
 * The console's Content-Security-Policy. Scripts run only with this response's nonce (Next.js
 * reads it from the request's CSP header and puts it on its own scripts) or when loaded by such a
 * script ('strict-dynamic'), so an injected <script> or onerror= attribute never runs.
 *
 * Styles allow 'unsafe-inline': server-rendered markup carries style="" attributes (charts,
 * widths) that a nonce cannot cover, and a nonce in style-src would switch 'unsafe-inline' off.
 * Injected CSS cannot run code; the script policy is what stops XSS.
 */
export function contentSecurityPolicy(nonce: string, dev = process.env.NODE_ENV === "development"): string {
  return [
    "default-src 'self'",
    // React's dev build uses eval for error overlays; production never does.
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${dev ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    `connect-src 'self'${dev ? " ws: wss:" : ""}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** The policy for API and other non-page responses: nothing may load or frame them. */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'";

/** Headers every response gets (next.config.ts headers()). */
export const SECURITY_HEADERS = [
  { key: "X-Content-Type-Options", value: "nosniff" },
  { key: "Referrer-Policy", value: "same-origin" },
  { key: "X-Frame-Options", value: "DENY" },
  { key: "Cross-Origin-Opener-Policy", value: "same-origin" },
  { key: "Permissions-Policy", value: "camera=(), microphone=(), geolocation=()" },
];
