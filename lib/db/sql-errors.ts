/**
 * SQLSTATE classes we act on. Transient errors are retried by loops; 23505 is a conflict the API
 * reports as 409. See https://www.postgresql.org/docs/current/errcodes-appendix.html
 */
const RETRYABLE_SQLSTATES = new Set([
  "40001", // serialization_failure
  "40P01", // deadlock_detected
  "55P03", // lock_not_available
  "57P01", // admin_shutdown (server restarting)
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now (starting up)
  "08000", "08003", "08006", "08001", "08004", // connection exceptions
  "53300", // too_many_connections
]);

const RETRYABLE_NODE_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH"]);

function codeOf(err: unknown): string | undefined {
  return typeof err === "object" && err !== null && "code" in err ? String((err as { code: unknown }).code) : undefined;
}

/** True when retrying the same statement later may succeed (lost connection, restart, deadlock). */
export function isTransientDbError(err: unknown): boolean {
  const code = codeOf(err);
  if (code && (RETRYABLE_SQLSTATES.has(code) || RETRYABLE_NODE_CODES.has(code))) return true;
  const message = err instanceof Error ? err.message : String(err);
  return /Connection terminated|connection timeout|Client has encountered a connection error|timeout exceeded when trying to connect|terminating connection/i.test(message);
}

/** True for a unique-constraint violation. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  if (codeOf(err) !== "23505") return false;
  return !constraint || (err as { constraint?: string }).constraint === constraint;
}

/** True for a check, not-null or foreign-key violation: the input was wrong, not the server. */
export function isIntegrityViolation(err: unknown): boolean {
  const code = codeOf(err);
  return code === "23514" || code === "23502" || code === "23503" || code === "22P02" || code === "22007" || code === "22008";
}

/** The SQLSTATE of a driver error, or of the one it wraps: Drizzle's DrizzleQueryError keeps it as its cause. */
function sqlStateOf(err: unknown): string | undefined {
  for (let e = err, depth = 0; e && depth < 3; e = (e as { cause?: unknown }).cause, depth++) {
    const code = codeOf(e);
    if (code) return code;
  }
  return undefined;
}

/** True when PostgreSQL refused a NUL character (U+0000) in text (22021) or jsonb (22P05). */
export function isNulRejection(err: unknown): boolean {
  const code = sqlStateOf(err);
  return code === "22021" || code === "22P05";
}

/** True when PostgreSQL ended the transaction to break a deadlock (40P01): it rolled back whole. */
export function isDeadlock(err: unknown): boolean {
  return sqlStateOf(err) === "40P01";
}
