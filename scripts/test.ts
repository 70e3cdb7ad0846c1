// `npm test`: the whole suite. Vitest (unit + integration against a real PostgreSQL, in two passes), then the
// console build if it is stale, then Playwright in Debian's Chromium. Ends with one summary line.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { buildIsStale } from "./build-state";

const out = path.resolve(".slotkeeper/test-results");
fs.mkdirSync(out, { recursive: true });
const vitestJson = path.join(out, "vitest.json");
const vitestAloneJson = path.join(out, "vitest-alone.json");
const playwrightJson = path.join(out, "playwright.json");
fs.rmSync(vitestJson, { force: true });
fs.rmSync(vitestAloneJson, { force: true });
fs.rmSync(playwrightJson, { force: true });

const only = process.argv[2]; // "unit" | "e2e" | undefined
const run = (cmd: string, args: string[], env: Record<string, string> = {}) =>
  spawnSync(cmd, args, { stdio: "inherit", env: { ...process.env, ...env } }).status ?? 1;

let passed = 0;
let failed = 0;
let skipped = 0;
let broken = false;
// The failed tests' names, printed again just above the summary line, so a log's tail names them.
const failures: string[] = [];

// Vitest twice: the suite in parallel, then the `*.alone.test.ts` files by themselves (vitest.config.mts).
const vitestPass = (json: string, env: Record<string, string>) => {
  const code = run(process.execPath, [path.resolve("node_modules/vitest/vitest.mjs"), "run", "--reporter=default", "--reporter=json", `--outputFile.json=${json}`], env);
  if (fs.existsSync(json)) {
    const r = JSON.parse(fs.readFileSync(json, "utf8"));
    passed += r.numPassedTests;
    failed += r.numFailedTests;
    skipped += r.numPendingTests + r.numTodoTests;
    for (const file of r.testResults ?? []) {
      if (file.status === "failed" && !(file.assertionResults ?? []).some((a: { status: string }) => a.status === "failed")) failures.push(`${path.relative(".", file.name)} (the file failed: ${String(file.message ?? "").split("\n")[0]})`);
      for (const a of file.assertionResults ?? []) if (a.status === "failed") failures.push(`${path.relative(".", file.name)} › ${a.fullName}`);
    }
    // A file that failed to load has no failed test but fails the run.
    if (code !== 0 && r.numFailedTests === 0) broken = true;
  } else if (code !== 0) broken = true;
};

if (only !== "e2e") {
  vitestPass(vitestJson, { SLOTKEEPER_TEST_ALONE: "0" });
  vitestPass(vitestAloneJson, { SLOTKEEPER_TEST_ALONE: "1" });
}

if (only !== "unit") {
  if (process.env.SLOTKEEPER_SKIP_BUILD !== "1" && buildIsStale()) {
    if (run(process.execPath, [require.resolve("next/dist/bin/next"), "build"]) !== 0) broken = true;
  }
  if (!broken || only === "e2e") {
    const code = run(process.execPath, [path.resolve("node_modules/@playwright/test/cli.js"), "test", "--reporter=list,json"], {
      PLAYWRIGHT_JSON_OUTPUT_FILE: playwrightJson,
      PLAYWRIGHT_JSON_OUTPUT_NAME: playwrightJson,
    });
    if (fs.existsSync(playwrightJson)) {
      const s = JSON.parse(fs.readFileSync(playwrightJson, "utf8")).stats;
      passed += s.expected + (s.flaky ?? 0);
      failed += s.unexpected;
      skipped += s.skipped;
      type Suite = { title: string; file?: string; specs?: { title: string; ok: boolean; tests: { status: string }[] }[]; suites?: Suite[] };
      const walk = (suite: Suite, file: string) => {
        for (const spec of suite.specs ?? []) if (spec.tests.some((t) => t.status === "unexpected")) failures.push(`${file} › ${spec.title}`);
        for (const child of suite.suites ?? []) walk(child, child.file ?? file);
      };
      for (const suite of JSON.parse(fs.readFileSync(playwrightJson, "utf8")).suites ?? []) walk(suite, suite.file ?? suite.title);
      if (code !== 0 && s.unexpected === 0) broken = true;
    } else if (code !== 0) broken = true;
  }
}

if (failures.length > 0) console.log(`failed:\n${failures.map((f) => `  ${f}`).join("\n")}`);
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped${broken ? " (a test file or step failed to run)" : ""}`);
process.exit(failed > 0 || broken || passed === 0 ? 1 : 0);
