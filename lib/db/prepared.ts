import { createHash } from "node:crypto";
import type { SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import type { Db } from "./client";

const dialect = new PgDialect();
const names = new Map<string, string>();

/**
 * Run a hot-path statement (claim, finish, heartbeat) as a named prepared statement: each pooled
 * connection parses and plans the text once, then only binds values. The name is derived from the
 * text, so every variant of a statement gets its own name and a name never meets a second text.
 * Plans stay custom (createPool sets plan_cache_mode): what is saved is the parse and analysis
 * of a long statement, about 0.5 ms per 500-run batch (scripts/bench/profile.ts).
 *
 * Needs a session-mode connection: a transaction-mode pooler without prepared-statement support
 * would hand the statement to a server that never saw it. Inside a Drizzle transaction (no pool
 * at hand) it falls back to a plain statement.
 */
export async function executePrepared<T extends Record<string, unknown>>(db: Db, prefix: string, query: SQL): Promise<{ rows: T[] }> {
  const client = (db as Partial<Db>).$client;
  if (!client || typeof client.query !== "function") return { rows: (await db.execute<T>(query)).rows as T[] };
  const { sql: text, params } = dialect.sqlToQuery(query);
  let name = names.get(text);
  if (name === undefined) {
    name = `${prefix}_${createHash("sha1").update(text).digest("hex").slice(0, 16)}`;
    names.set(text, name);
  }
  return client.query<T>({ name, text, values: params as unknown[] });
}
