import { createHash, randomBytes, scryptSync } from "node:crypto";
import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import type { Actor } from "../audit/record";
import { ROLES, type Role } from "./scopes";

/**
 * Console sessions, kept in PostgreSQL. The cookie holds 32 random bytes; the table holds their
 * sha256 (`id_hash`), so a read of the table hands out no usable cookie. Expiry and last use are
 * compared with the database clock (sk_now()). A person's session takes the person's current role
 * and ends when the person is disabled; an environment account's session (operator, viewer) ends
 * when its password changes (`password_stamp`).
 */

/** Anything that can run a statement: the db, or a transaction inside `db.transaction`. */
type Queryable = Pick<Db, "execute">;

/** last_seen_at is written at most this often, so a polling page costs no write per request. */
const TOUCH_EVERY_SECONDS = 60;

export function hashSessionId(id: string): string {
  return createHash("sha256").update(id, "utf8").digest("hex");
}

/**
 * A stamp of an environment password: scrypt with a fixed salt, cut to 16 bytes (costly to guess
 * from, like people's hashes), computed once per password per process.
 */
const stamps = new Map<string, string>();
export function passwordStamp(password: string): string {
  let s = stamps.get(password);
  if (!s) {
    s = scryptSync(password, "slotkeeper-env-session-stamp-v1", 16, { N: 2 ** 14, r: 8, p: 1 }).toString("base64url");
    if (stamps.size > 8) stamps.clear();
    stamps.set(password, s);
  }
  return s;
}

/** Who a new session is for: a person (by id) or an environment account with its current password. */
export type SessionOwner = { account: string; role: Role; personId: number | null; envPassword?: string };

/** Open a session for `owner`, lasting `hours`; returns the cookie value, shown to nobody else. */
export async function createSession(db: Queryable, owner: SessionOwner, hours: number): Promise<string> {
  const id = randomBytes(32).toString("base64url");
  const stamp = owner.envPassword === undefined ? null : passwordStamp(owner.envPassword);
  await db.execute(sql`
    INSERT INTO sessions (id_hash, person_id, account, role, password_stamp, created_at, expires_at, last_seen_at)
    VALUES (${hashSessionId(id)}, ${owner.personId}, ${owner.account}, ${owner.role}, ${stamp}, sk_now(), sk_now() + make_interval(secs => ${hours * 3600}::float8), sk_now())`);
  return id;
}

/** The environment accounts' current passwords, which decide whether their sessions still hold. */
export type EnvPasswords = { operator?: string; viewer?: string };

/**
 * The actor a session cookie stands for, or null when it is unknown, expired (by the database
 * clock), its person is disabled, or its environment password changed. Touches last_seen_at at
 * most once a minute.
 */
export async function findSessionActor(db: Queryable, id: string, env: EnvPasswords): Promise<Actor | null> {
  if (!id || id.length > 200) return null;
  const { rows } = await db.execute<{ id_hash: string; person_id: string | null; account: string; role: string; password_stamp: string | null; person_name: string | null; person_role: string | null; stale: boolean }>(
    sql`SELECT s.id_hash, s.person_id, s.account, s.role, s.password_stamp, p.name AS person_name, p.role AS person_role,
               s.last_seen_at < sk_now() - make_interval(secs => ${TOUCH_EVERY_SECONDS}) AS stale
          FROM sessions s LEFT JOIN people p ON p.id = s.person_id
         WHERE s.id_hash = ${hashSessionId(id)} AND s.expires_at > sk_now() AND (s.person_id IS NULL OR p.disabled_at IS NULL)`,
  );
  const row = rows[0];
  if (!row) return null;
  let actor: Actor;
  if (row.person_id !== null) {
    if (!row.person_name || !(ROLES as readonly string[]).includes(row.person_role ?? "")) return null;
    actor = { name: row.person_name, kind: "user", role: row.person_role as Role, personId: Number(row.person_id) };
  } else {
    const password = row.account === "operator" ? env.operator : row.account === "viewer" ? env.viewer : undefined;
    if (!password || row.password_stamp !== passwordStamp(password) || !(ROLES as readonly string[]).includes(row.role)) return null;
    actor = { name: row.account, kind: "user", role: row.role as Role };
  }
  if (row.stale) await db.execute(sql`UPDATE sessions SET last_seen_at = sk_now() WHERE id_hash = ${row.id_hash}`);
  return actor;
}

/** End one session (signing out). */
export async function deleteSession(db: Queryable, id: string): Promise<void> {
  await db.execute(sql`DELETE FROM sessions WHERE id_hash = ${hashSessionId(id)}`);
}

/** End every session of a person (password change, disable, sign out everywhere); returns how many. */
export async function deletePersonSessions(db: Queryable, personId: number): Promise<number> {
  const res = await db.execute(sql`DELETE FROM sessions WHERE person_id = ${personId}`);
  return res.rowCount ?? 0;
}

/** End every session of an environment account (sign out everywhere as operator or viewer). */
export async function deleteAccountSessions(db: Queryable, account: string): Promise<number> {
  const res = await db.execute(sql`DELETE FROM sessions WHERE person_id IS NULL AND account = ${account}`);
  return res.rowCount ?? 0;
}

/** Delete sessions that expired (by the database clock), at most `limit` per call; returns how many. */
export async function deleteExpiredSessions(db: Queryable, limit = 1000): Promise<number> {
  const res = await db.execute(sql`DELETE FROM sessions WHERE id_hash IN (SELECT id_hash FROM sessions WHERE expires_at <= sk_now() LIMIT ${limit})`);
  return res.rowCount ?? 0;
}
