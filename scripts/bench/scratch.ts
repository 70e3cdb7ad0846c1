// A scratch database for the bench's measuring scripts (sweep-cost, profile, explain,
// scripts/console-timings.ts): made on DATABASE_URL's server, migrated, dropped whatever happens.
import pg from "pg";
import { createDb, createPool, type Db } from "../../lib/db/client";
import { migrateDatabase } from "../../lib/db/migrate";
import { setPartitionCount } from "../../lib/partitions/count";

export type Scratch = { url: string; pool: pg.Pool; db: Db };

/**
 * Create `<prefix>_<base-36 time>` on DATABASE_URL's server, migrate it, set `partitions` (when
 * given), run `fn` on a pool of `poolMax` connections, then end the pool and drop the database.
 */
export async function withScratchDatabase<T>(prefix: string, opts: { poolMax: number; partitions?: number }, fn: (s: Scratch) => Promise<T>): Promise<T> {
  const server = process.env.DATABASE_URL;
  if (!server) throw new Error("set DATABASE_URL to a server this script may create a database on");
  const name = `${prefix}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
    const u = new URL(server);
    u.pathname = `/${name}`;
    const url = u.toString();
    const pool = createPool(url, { max: opts.poolMax, applicationName: "slotkeeper:bench" });
    try {
      await migrateDatabase(url);
      const db = createDb(pool);
      if (opts.partitions !== undefined) await setPartitionCount(db, opts.partitions);
      return await fn({ url, pool, db });
    } finally {
      await pool.end();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    }
  } finally {
    await admin.end();
  }
}

/** A script's entry point: run `main`, print what failed and exit 1 if it does. */
export function runScript(main: () => Promise<void>): void {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
