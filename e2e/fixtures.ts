import fs from "node:fs";
import { test as base, expect } from "@playwright/test";
import pg from "pg";
import { STACK_FILE, type StackInfo } from "./stack";

/** The running stack's addresses, written by global-setup. */
export function stackInfo(): StackInfo {
  return JSON.parse(fs.readFileSync(STACK_FILE, "utf8"));
}

type Fixtures = {
  /** A pg pool on the e2e database, for arranging data and moving the database clock. */
  sql: pg.Pool;
};

export const test = base.extend<Fixtures>({
  baseURL: async ({}, use) => use(stackInfo().baseURL),
  sql: async ({}, use) => {
    const pool = new pg.Pool({ connectionString: stackInfo().databaseUrl, max: 2 });
    await use(pool);
    await pool.end();
  },
});

export { expect };
