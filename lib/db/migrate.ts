import path from "node:path";
import { drizzle } from "drizzle-orm/node-postgres";
import { migrate } from "drizzle-orm/node-postgres/migrator";
import pg from "pg";
import { runBackfills } from "./backfills";

/** Arbitrary advisory-lock key shared by every process that migrates ("slotkeep" in ASCII). */
const MIGRATION_LOCK_KEY = 0x736c6f746b656570n;

/** Folder of the committed drizzle-kit migrations. */
export const migrationsFolder = path.resolve(process.cwd(), "drizzle");

/**
 * Apply pending migrations, then the data changes that must follow some of them in a transaction of
 * their own (lib/db/backfills). Safe to run twice (drizzle records what it applied) and safe to run
 * from several processes at once: they queue on one advisory lock, so only one applies each file.
 * `migrationsFolder` is for tests that apply part of the history (lib/db/upgrade.test.ts) and for
 * the installed package, which applies its own copy (worker/package.ts), not the working directory's.
 */
export async function migrateDatabase(url: string, opts: { migrationsFolder?: string } = {}): Promise<void> {
  const client = new pg.Client({ connectionString: url, application_name: "slotkeeper:migrate" });
  await client.connect();
  try {
    await client.query("SET client_min_messages = warning");
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_KEY.toString()]);
    try {
      await migrate(drizzle(client), { migrationsFolder: opts.migrationsFolder ?? migrationsFolder });
      await runBackfills(client, opts.migrationsFolder ?? migrationsFolder);
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY.toString()]);
    }
  } finally {
    await client.end();
  }
}
