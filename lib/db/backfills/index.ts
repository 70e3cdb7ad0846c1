/**
 * Data changes that must follow a migration in a transaction of their own. drizzle applies every
 * pending migration in one transaction, and PostgreSQL refuses to use an enum value in the
 * transaction that added it (`ALTER TYPE … ADD VALUE`), so a migration that adds a value cannot
 * also move rows to it. A backfill runs once, right after the migrate call that applied the
 * migration it names (`after`, the migration's tag), in a transaction of its own that also records
 * it as done in `drizzle.slotkeeper_backfills` (beside drizzle's own record of migrations). A crash
 * between the migration and its backfill leaves it unrecorded, so the next migrate runs it.
 */
import fs from "node:fs";
import path from "node:path";
import { operatorSkipReasons } from "./operator-skip-reasons";

export type Backfill = { name: string; after: string; sql: string };

/** Every backfill, in the order of the migrations they follow. */
export const BACKFILLS: Backfill[] = [operatorSkipReasons];

type Journal = { entries: { tag: string; when: number }[] };
type Queryable = { query: <R extends object = Record<string, unknown>>(text: string, values?: unknown[]) => Promise<{ rows: R[] }> };

/**
 * Run the backfills whose migration has been applied and that have not run yet. Call it with the
 * migration lock held, after drizzle's migrate, on the connection that migrated.
 */
export async function runBackfills(client: Queryable, migrationsFolder: string, backfills: Backfill[] = BACKFILLS): Promise<string[]> {
  const journal = JSON.parse(fs.readFileSync(path.join(migrationsFolder, "meta", "_journal.json"), "utf8")) as Journal;
  const whenOf = new Map(journal.entries.map((e) => [e.tag, e.when]));
  await client.query(`CREATE TABLE IF NOT EXISTS drizzle.slotkeeper_backfills (name text PRIMARY KEY, done_at timestamptz NOT NULL DEFAULT now())`);
  const applied = await client.query<{ created_at: string }>(`SELECT created_at FROM drizzle.__drizzle_migrations`);
  const appliedAt = new Set(applied.rows.map((r) => Number(r.created_at)));
  const done = new Set((await client.query<{ name: string }>(`SELECT name FROM drizzle.slotkeeper_backfills`)).rows.map((r) => r.name));
  const ran: string[] = [];
  for (const b of backfills) {
    const when = whenOf.get(b.after);
    // A folder that stops before the migration (an older release, a test's partial history) has nothing to follow.
    if (when === undefined || done.has(b.name) || !appliedAt.has(when)) continue;
    await client.query("BEGIN");
    try {
      await client.query(b.sql);
      await client.query(`INSERT INTO drizzle.slotkeeper_backfills (name) VALUES ($1)`, [b.name]);
      await client.query("COMMIT");
    } catch (e) {
      await client.query("ROLLBACK");
      throw e;
    }
    ran.push(b.name);
  }
  return ran;
}
