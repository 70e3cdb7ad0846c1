import fs from "node:fs";
import { test as base, expect, type Page } from "@playwright/test";
import pg from "pg";
import { STACK_FILE, type StackInfo } from "./stack";

/** The running stack's addresses, written by global-setup. */
export function stackInfo(): StackInfo {
  return JSON.parse(fs.readFileSync(STACK_FILE, "utf8"));
}

/**
 * After a navigation that waited for the page to load, wait until React has hydrated it too
 * (components/hydration-mark.tsx): a field filled before then is reset by the state React starts
 * from. Pages that are not the console's (another site, a JSON answer) are left alone.
 */
export async function untilHydrated(page: Page, waitUntil?: string): Promise<void> {
  if (waitUntil !== undefined && waitUntil !== "load" && waitUntil !== "networkidle") return;
  if ((await page.locator('html[data-app="slotkeeper"]').count()) === 0) return;
  await page.locator("html[data-hydrated]").waitFor({ state: "attached" });
}

type Fixtures = {
  /** A pg pool on the e2e database, for arranging data and moving the database clock. */
  sql: pg.Pool;
};

export const test = base.extend<Fixtures>({
  baseURL: async ({}, use) => use(stackInfo().baseURL),
  // page.goto and page.reload return once the console's page is hydrated (untilHydrated).
  page: async ({ page }, use) => {
    const goto = page.goto.bind(page);
    const reload = page.reload.bind(page);
    page.goto = async (url, options) => {
      const res = await goto(url, options);
      await untilHydrated(page, options?.waitUntil);
      return res;
    };
    page.reload = async (options) => {
      const res = await reload(options);
      await untilHydrated(page, options?.waitUntil);
      return res;
    };
    await use(page);
  },
  sql: async ({}, use) => {
    const pool = new pg.Pool({ connectionString: stackInfo().databaseUrl, max: 2 });
    await use(pool);
    await pool.end();
  },
});

export { expect };
