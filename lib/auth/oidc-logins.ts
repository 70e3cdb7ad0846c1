import { sql } from "drizzle-orm";
import type { Db } from "../db/client";

/**
 * Delete OpenID Connect sign-ins that were started and never finished (`oidc_logins` rows past
 * their expiry by the database clock), at most `limit` per call; returns how many. The worker's
 * retention sweep calls it, so abandoned sign-ins go even when no new one starts; a callback for
 * an expired row is refused whether the row is still there or not (lib/auth/oidc.ts).
 */
export async function deleteExpiredOidcLogins(db: Pick<Db, "execute">, limit = 1000): Promise<number> {
  const res = await db.execute(sql`
    DELETE FROM oidc_logins WHERE state_hash IN (SELECT state_hash FROM oidc_logins WHERE expires_at <= sk_now() LIMIT ${limit})`);
  return res.rowCount ?? 0;
}
