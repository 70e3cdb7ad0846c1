import next from "eslint-config-next";

const config = [
  ...next,
  {
    ignores: [".next/**", "node_modules/**", ".slotkeeper/**", "drizzle/**", "e2e/output/**", "test-results/**", "playwright-report/**", "next-env.d.ts", "dist/**"],
  },
  {
    // Playwright fixtures call `use`, which is not React's hook.
    files: ["e2e/**"],
    rules: { "react-hooks/rules-of-hooks": "off" },
  },
];

export default config;
