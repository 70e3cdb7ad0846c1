import { sql } from "drizzle-orm";
import type { Db } from "../db/client";

/** A pass rewrites at least this many watch rows before it vacuums alert_watch itself (see vacuumWatchAfter). */
export const WATCH_VACUUM_MIN_ROWS = 10_000;

/** …and at least this share of the table, ten times the table's own autovacuum scale factor (lib/db/sql/tables/alert_watch.sql). */
export const WATCH_VACUUM_SHARE = 0.2;

/**
 * Vacuum and analyse alert_watch after a pass that rewrote a large share of it (`rewritten` rows:
 * one per schedule it judged), so that the reads behind the Overview's counts stay cheap whatever
 * the server's autovacuum does. Returns whether it did.
 *
 * Why: a pass over the whole fleet (the first, or one after a migration) gives every row a status.
 * Until a vacuum, alert_watch_unevaluated_idx still points at every row's old version, and until an
 * analysis the statistics say every status is null, so the count of schedules not judged yet is
 * planned as a scan of alert_watch joined to every live schedule, on every Overview reading
 * (docs/benchmarks.md, "With 20 console readers"). The table's autovacuum settings start at a
 * fiftieth of it, so where autovacuum runs it has acted long before this share; where it is off or
 * behind, the pass that made the dead rows clears them, once. How much a pass rewrote is known here
 * without the server's statistics, which a backend reports only after its transactions, up to
 * seconds later.
 */
export async function vacuumWatchAfter(db: Pick<Db, "execute">, rewritten: number, minRows = WATCH_VACUUM_MIN_ROWS): Promise<boolean> {
  if (rewritten < minRows) return false;
  // reltuples: the rows the last vacuum or analysis counted; -1 before either.
  const { rows } = await db.execute<{ n: number }>(sql`SELECT greatest(reltuples, 0)::float8 AS n FROM pg_class WHERE oid = 'alert_watch'::regclass`);
  if (rewritten < WATCH_VACUUM_SHARE * Number(rows[0]?.n ?? 0)) return false;
  // VACUUM cannot run inside a transaction: this is a statement of its own on a pool connection.
  await db.execute(sql`VACUUM (ANALYZE) alert_watch`);
  return true;
}
