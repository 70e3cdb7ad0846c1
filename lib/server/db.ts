import "server-only";
import { createDb, createPool, WEB_POOL_OPTIONS, type Db } from "../db/client";
import { createLogger, type Logger } from "../log";

type Globals = { __slotkeeperDb?: Db; __slotkeeperReadDb?: Db | null; __slotkeeperLog?: Logger; __slotkeeperOnClose?: (() => void)[] };
const g = globalThis as Globals;

/**
 * The web process's database handle. `npm start` passes DATABASE_URL (the embedded server's when
 * none was configured); one pool per process, kept on globalThis so dev reloads reuse it.
 */
export function getDb(): Db {
  if (!g.__slotkeeperDb) {
    const url = process.env.DATABASE_URL;
    if (!url) throw new Error("DATABASE_URL is not set for the web process; start it with `npm start`");
    g.__slotkeeperDb = createDb(createPool(url, { ...WEB_POOL_OPTIONS, applicationName: "slotkeeper:web" }));
  }
  return g.__slotkeeperDb;
}

/**
 * The pool on DATABASE_READ_URL (a streaming standby), or null when it is not set. Only
 * lib/server/replica.ts hands it out, to read-only routes, and only while the standby answers.
 * Connections open in 2 s or fail: an unreachable standby sends reads to the primary, not into a
 * 10 s wait.
 */
export function getReplicaDb(): Db | null {
  if (g.__slotkeeperReadDb === undefined) {
    const url = process.env.DATABASE_READ_URL;
    g.__slotkeeperReadDb = url ? createDb(createPool(url, { ...WEB_POOL_OPTIONS, applicationName: "slotkeeper:web:read", connectTimeoutMs: 2_000 })) : null;
  }
  return g.__slotkeeperReadDb;
}

/** Run `fn` when closeDb runs (the replica probe's timer). */
export function onCloseDb(fn: () => void): void {
  (g.__slotkeeperOnClose ??= []).push(fn);
}

/** The web process's logger. */
export function getLog(): Logger {
  g.__slotkeeperLog ??= createLogger("web");
  return g.__slotkeeperLog;
}

/** Close the web process's pool (tests that call route handlers, at the end of their file). */
export async function closeDb(): Promise<void> {
  for (const fn of g.__slotkeeperOnClose?.splice(0) ?? []) fn();
  const db = g.__slotkeeperDb;
  const readDb = g.__slotkeeperReadDb;
  g.__slotkeeperDb = undefined;
  g.__slotkeeperReadDb = undefined;
  await Promise.all([db?.$client.end(), readDb?.$client.end()]);
}
