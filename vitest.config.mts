import path from "node:path";
import { configDefaults, defineConfig } from "vitest/config";

// `*.alone.test.ts` files check what other sessions on the same server can disturb (that a renewal
// finds the room pruning leaves on a page: another backend's snapshot or pin stops the prune), so
// `npm test` runs them in a second pass, one file at a time, after everything else
// (SLOTKEEPER_TEST_ALONE=1); the first pass leaves them out.
const alone = process.env.SLOTKEEPER_TEST_ALONE === "1";
const ALONE = "**/*.alone.test.ts";

export default defineConfig({
  resolve: { alias: { "@": path.resolve(import.meta.dirname), "server-only": path.resolve(import.meta.dirname, "lib/testing/server-only-stub.ts") } },
  test: {
    environment: "node",
    include: alone ? [ALONE] : ["lib/**/*.test.ts", "worker/**/*.test.ts", "app/**/*.test.ts", "scripts/**/*.test.ts", "components/**/*.test.ts", "cli/**/*.test.ts"],
    exclude: alone ? configDefaults.exclude : [...configDefaults.exclude, ALONE],
    globalSetup: ["lib/testing/global-setup.ts"],
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores: more files at once only makes timing-sensitive tests flaky.
    maxWorkers: alone ? 1 : 2,
  },
});
