import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import type { HandlerInfo } from "../workers/registry";

/** Handlers every worker ships with (worker/handlers/*); the web knows them without a worker. */
export const BUILTIN_HANDLERS: HandlerInfo[] = [
  { name: "noop", idempotent: true, description: "Does nothing and succeeds; for demos and benchmarks." },
  { name: "sleep", idempotent: true, description: "Waits payload.ms milliseconds (honours the abort signal), then succeeds." },
  { name: "http", idempotent: true, description: "Calls payload.url with an Idempotency-Key header; 2xx succeeds, 408/429/5xx retry, other 4xx fail for good." },
  { name: "sql-ledger", idempotent: true, description: "Writes one ledger row per slot, keyed by the idempotency key and fenced on the token." },
  { name: "fail", idempotent: true, description: "Always fails (payload.nonRetryable to fail for good); for testing retries and dead runs." },
  {
    name: "command",
    // A program is as idempotent as its author made it: it is handed SLOTKEEPER_IDEMPOTENCY_KEY and SLOTKEEPER_FENCING_TOKEN to be.
    idempotent: false,
    description: "Runs payload.command with payload.args (no shell unless shell: true) on workers started with SLOTKEEPER_COMMANDS; exit 0 succeeds, nonRetryableExitCodes fail for good, anything else retries.",
  },
];

/**
 * Handlers a schedule may name: the built-ins plus whatever live or recent workers registered
 * (custom handlers exist only in the workers that register them). Non-idempotent ones carry the
 * console's "this job may run twice" warning.
 */
export async function listKnownHandlers(db: Db): Promise<HandlerInfo[]> {
  const r = await db.execute<{ handlers: HandlerInfo[] }>(sql`
    SELECT handlers FROM workers WHERE last_heartbeat_at > sk_now() - interval '7 days'`);
  const byName = new Map(BUILTIN_HANDLERS.map((h) => [h.name, h]));
  for (const row of r.rows) for (const h of row.handlers ?? []) if (h?.name && !byName.has(h.name)) byName.set(h.name, h);
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}
