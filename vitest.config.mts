import path from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { alias: { "@": path.resolve(import.meta.dirname), "server-only": path.resolve(import.meta.dirname, "lib/testing/server-only-stub.ts") } },
  test: {
    environment: "node",
    include: ["lib/**/*.test.ts", "worker/**/*.test.ts", "app/**/*.test.ts", "scripts/**/*.test.ts", "components/**/*.test.ts"],
    globalSetup: ["lib/testing/global-setup.ts"],
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores: more files at once only makes timing-sensitive tests flaky.
    maxWorkers: 2,
  },
});
