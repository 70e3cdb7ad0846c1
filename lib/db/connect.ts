import path from "node:path";
import pg from "pg";
import type { Config } from "../config";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "./embedded";

/** Thrown when the database cannot be reached; the message is one line naming host and cause. */
export class DatabaseUnreachableError extends Error {}

const CAUSES: Record<string, string> = {
  ECONNREFUSED: "connection refused (is PostgreSQL running there?)",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host name lookup failed",
  ETIMEDOUT: "connection timed out",
  EHOSTUNREACH: "host unreachable",
  "28P01": "password authentication failed",
  "28000": "authentication rejected",
  "3D000": "database does not exist",
};

/** `user@host:port/db` for messages; never includes the password. */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.username ? `${decodeURIComponent(u.username)}@` : ""}${u.hostname}:${u.port || "5432"}${u.pathname}`;
  } catch {
    return "(unparseable DATABASE_URL)";
  }
}

/** One line explaining why a connection failed. */
export function explainConnectionError(url: string, err: unknown): string {
  const code = (err as { code?: string })?.code;
  const cause = (code && CAUSES[code]) || (err instanceof Error ? err.message : String(err));
  return `cannot connect to PostgreSQL at ${describeUrl(url)}: ${cause}`;
}

/** Open and close one connection, turning any failure into a DatabaseUnreachableError. */
export async function checkDatabase(url: string, timeoutMs = 5000): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  client.on("error", () => {});
  try {
    await client.connect();
    await client.query("SELECT 1");
  } catch (err) {
    throw new DatabaseUnreachableError(explainConnectionError(url, err), { cause: err });
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * The database every entry point uses: DATABASE_URL when set, otherwise the embedded server in
 * the data folder (started here, or joined if another Slotkeeper process already runs it).
 */
export async function openDatabase(config: Config, log?: (line: string) => void): Promise<EmbeddedDatabase> {
  if (config.databaseUrl) {
    await checkDatabase(config.databaseUrl);
    return { url: config.databaseUrl, dataDir: "", owned: false, stop: async () => {} };
  }
  const embedded = await startEmbeddedPostgres({ dir: path.join(config.dataDir), port: config.embeddedPgPort, log });
  await checkDatabase(embedded.url);
  return embedded;
}
