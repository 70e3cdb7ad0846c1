import { randomBytes } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";
import { createDb, createPool, type Db } from "../db/client";

/** A database of its own for one test file, cloned from the migrated template. */
export type TestDatabase = { url: string; name: string; pool: pg.Pool; db: Db; drop: () => Promise<void> };

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * Create a fresh, migrated database. Files run in parallel, each on its own database, so
 * concurrency tests can open as many real connections as they need.
 */
export async function createTestDatabase(opts: { poolSize?: number } = {}): Promise<TestDatabase> {
  const adminUrl = inject("pgAdminUrl");
  const template = inject("pgTemplate");
  const name = `${template}_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
  await admin.end();
  const url = withDatabase(adminUrl, name);
  const pool = createPool(url, { max: opts.poolSize ?? 10, applicationName: "slotkeeper:test" });
  return {
    url,
    name,
    pool,
    db: createDb(pool),
    drop: async () => {
      await pool.end();
      const a = new pg.Client({ connectionString: adminUrl });
      await a.connect();
      await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await a.end();
    },
  };
}
