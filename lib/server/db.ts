import "server-only";
import { createDb, createPool, type Db } from "../db/client";
import { createLogger, type Logger } from "../log";

type Globals = { __slotkeeperDb?: Db; __slotkeeperLog?: Logger };
const g = globalThis as Globals;

/**
 * The web process's database handle. `npm start` passes DATABASE_URL (the embedded server's when
 * none was configured); one pool per process, kept on globalThis so dev reloads reuse it.
 */
export function getDb(): Db {
  if (!g.__slotkeeperDb) {
    const url = process.env.DATABASE_URL;
    if (!url) throw new Error("DATABASE_URL is not set for the web process; start it with `npm start`");
    g.__slotkeeperDb = createDb(createPool(url, { max: 10, applicationName: "slotkeeper:web", statementTimeoutMs: 15_000 }));
  }
  return g.__slotkeeperDb;
}

/** The web process's logger. */
export function getLog(): Logger {
  g.__slotkeeperLog ??= createLogger("web");
  return g.__slotkeeperLog;
}

/** Close the web process's pool (tests that call route handlers, at the end of their file). */
export async function closeDb(): Promise<void> {
  const db = g.__slotkeeperDb;
  g.__slotkeeperDb = undefined;
  await db?.$client.end();
}
