import { createHash } from "node:crypto";
import { fillPlaceholders, type SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import type pg from "pg";
import type { Db } from "./client";

const dialect = new PgDialect();

/** A hot-path statement, turned into text once, at module load: its values are `sql.placeholder`s. */
export type Prepared = {
  name: string;
  text: string;
  params: unknown[];
  /** Why a whole-table scan is acceptable in this one's plan (it is off the worker's path), if it is. */
  scanAllowed?: string;
};

/**
 * Build a hot-path statement (claim, finish, heartbeat) once. Each pooled connection then parses
 * and plans its text once as a named prepared statement and afterwards only binds values, and the
 * worker does not rebuild the text from Drizzle's template on every batch. The name is derived
 * from the text, so every variant gets its own name and a name never meets a second text.
 * Plans are generic (createPool sets plan_cache_mode = force_generic_plan): each connection plans
 * a statement once, without its values, and lib/db/plans.test.ts checks those plans read rows by
 * index or TID.
 *
 * Needs a session-mode connection: a transaction-mode pooler without prepared-statement support
 * would hand the statement to a server that never saw it.
 */
export function prepare(prefix: string, query: SQL, opts: { scanAllowed?: string } = {}): Prepared {
  const { sql: text, params } = dialect.sqlToQuery(query);
  const statement: Prepared = { name: `${prefix}_${createHash("sha1").update(text).digest("hex").slice(0, 16)}`, text, params, ...opts };
  preparedStatements.push(statement);
  return statement;
}

/** Every statement made with `prepare`, as its module loaded: lib/db/plans.test.ts checks their plans. */
export const preparedStatements: Prepared[] = [];

/**
 * Run a prepared statement with its placeholders' values, on the pool or, inside a Drizzle
 * transaction, on the transaction's connection (Drizzle keeps it on the session; it has no public
 * accessor, and db.execute cannot fill placeholders).
 */
export async function runPrepared<T extends Record<string, unknown>>(db: Db, statement: Prepared, values: Record<string, unknown>): Promise<{ rows: T[] }> {
  const client: Pick<pg.ClientBase, "query"> | undefined = (db as Partial<Db>).$client ?? (db as unknown as { session?: { client?: pg.ClientBase } }).session?.client;
  if (!client || typeof client.query !== "function") throw new Error("runPrepared: no connection behind this database handle");
  return client.query<T>({ name: statement.name, text: statement.text, values: fillPlaceholders(statement.params, values) });
}

/**
 * A PostgreSQL array literal of integers (or nulls), for a `$n::int[]`-style parameter. pg would
 * serialise a JS array element by element, quoting and escaping each one (two regular expressions
 * per element, for arrays that hold only numbers). Written by join, which makes the literal in one
 * string: appending element by element would make two garbage strings per element, per run.
 */
export function intArray(values: readonly (number | null | undefined)[]): string {
  let nulls = false;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v === null || v === undefined) nulls = true;
    else if (!Number.isFinite(v)) throw new Error(`intArray: ${v} is not a finite number`);
  }
  return `{${(nulls ? values.map((v) => (v === null || v === undefined ? "NULL" : v)) : values).join(",")}}`;
}

const TID = /^\(\d+,\d+\)$/;

/** A PostgreSQL array literal of tids ("(page,item)", as ctid::text reads), for a `$n::tid[]` parameter. */
export function tidArray(values: readonly string[]): string {
  // A tid has no quote or backslash to escape; anything else is not one of ours.
  for (let i = 0; i < values.length; i++) if (!TID.test(values[i])) throw new Error(`tidArray: ${JSON.stringify(values[i])} is not a tid`);
  return values.length === 0 ? "{}" : `{"${values.join('","')}"}`;
}
