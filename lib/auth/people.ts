import { sql } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import { recordAudit, type Actor } from "../audit/record";
import { decoyHash, hashPassword, verifyPassword } from "./password-hash";
import type { PasswordChange, PersonInput, PersonPatch } from "./person-input";
import { ROLES, type Role } from "./scopes";
import { deletePersonSessions } from "./sessions";

/**
 * People: one console account per person, with a role (lib/auth/scopes.ts says what each role
 * may do). Every change is audited in its own transaction, and a password change, a reset or a
 * disable ends the person's sessions in that same transaction.
 */

/** A person as the API lists them: never the password hash. */
export const personViewSchema = z.object({ name: z.string(), displayName: z.string().nullable(), role: z.enum(ROLES), createdAt: z.string(), disabledAt: z.string().nullable() }).strict();
export type PersonView = z.infer<typeof personViewSchema>;

const COLUMNS = sql.raw(`id, name, display_name, role, created_at, disabled_at`);

type Row = { id: string | number; name: string; display_name: string | null; role: string; created_at: Date | string; disabled_at: Date | string | null };

const iso = (v: Date | string | null) => (v === null ? null : new Date(v).toISOString());
const toRole = (r: string): Role => ((ROLES as readonly string[]).includes(r) ? (r as Role) : "viewer");

function toView(r: Row): PersonView {
  return { name: r.name, displayName: r.display_name, role: toRole(r.role), createdAt: iso(r.created_at)!, disabledAt: iso(r.disabled_at) };
}

/** Every person, by name. */
export async function listPeople(db: Db): Promise<PersonView[]> {
  const res = await db.execute<Row>(sql`SELECT ${COLUMNS} FROM people ORDER BY name`);
  return res.rows.map(toView);
}

/** Add a person (a taken name is a 409 naming `name`), audited. */
export async function createPerson(db: Db, actor: Actor, input: PersonInput): Promise<PersonView> {
  const hash = await hashPassword(input.password);
  return db.transaction(async (tx) => {
    const res = await tx.execute<Row>(sql`
      INSERT INTO people (name, display_name, role, password_hash, created_at)
      VALUES (${input.name}, ${input.displayName ?? null}, ${input.role}, ${hash}, sk_now())
      ON CONFLICT (name) DO NOTHING
      RETURNING ${COLUMNS}`);
    if (!res.rows[0]) throw new AppError("conflict", `a person named ${input.name} already exists`, "name");
    const view = toView(res.rows[0]);
    await recordAudit(tx, actor, { action: "person.create", targetType: "person", targetId: view.name, after: { name: view.name, displayName: view.displayName, role: view.role } });
    return view;
  });
}

/**
 * Change a person's role, display name, password (an admin's reset) or disabled state, audited
 * with the before and after of what changed. A reset or a disable deletes the person's sessions.
 * An admin cannot disable or demote themselves (another admin must).
 */
export async function updatePerson(db: Db, actor: Actor, name: string, patch: PersonPatch): Promise<PersonView> {
  const hash = patch.password === undefined ? undefined : await hashPassword(patch.password);
  return db.transaction(async (tx) => {
    const found = await tx.execute<Row>(sql`SELECT ${COLUMNS} FROM people WHERE name = ${name} FOR UPDATE`);
    const row = found.rows[0];
    if (!row) throw new AppError("not_found", `no person named ${name}`);
    const id = Number(row.id);
    const self = actor.personId === id;
    if (self && patch.disabled === true) throw new AppError("conflict", "you cannot disable yourself; another admin can", "disabled");
    if (self && patch.role !== undefined && patch.role !== "admin") throw new AppError("conflict", "you cannot take the admin role from yourself; another admin can", "role");
    const res = await tx.execute<Row>(sql`
      UPDATE people SET
        role = COALESCE(${patch.role ?? null}, role),
        display_name = CASE WHEN ${patch.displayName !== undefined} THEN ${patch.displayName ?? null} ELSE display_name END,
        password_hash = COALESCE(${hash ?? null}, password_hash),
        disabled_at = CASE WHEN ${patch.disabled === undefined} THEN disabled_at WHEN ${patch.disabled === true} THEN COALESCE(disabled_at, sk_now()) ELSE NULL END
      WHERE id = ${id}
      RETURNING ${COLUMNS}`);
    const before = toView(row);
    const after = toView(res.rows[0]);
    const b: Record<string, unknown> = {};
    const a: Record<string, unknown> = {};
    if (before.role !== after.role) [b.role, a.role] = [before.role, after.role];
    if (before.displayName !== after.displayName) [b.displayName, a.displayName] = [before.displayName, after.displayName];
    if ((before.disabledAt !== null) !== (after.disabledAt !== null)) [b.disabled, a.disabled] = [before.disabledAt !== null, after.disabledAt !== null];
    if (hash !== undefined) a.reset = "password";
    let signedOut = 0;
    if (hash !== undefined || patch.disabled === true) signedOut = await deletePersonSessions(tx, id);
    await recordAudit(tx, actor, { action: "person.update", targetType: "person", targetId: after.name, before: b, after: { ...a, ...(signedOut ? { signedOut } : {}) } });
    return after;
  });
}

/** The person behind an actor, or a 403: environment accounts, tokens and the local operator have no password here. */
export function ownPersonId(actor: Actor): number {
  if (actor.personId === undefined) {
    throw new AppError("forbidden", actor.kind === "user" ? "this account's password is set in the environment (SLOTKEEPER_OPERATOR_PASSWORD / SLOTKEEPER_VIEWER_PASSWORD), not here" : "only a person signed in with their own account can change their password");
  }
  return actor.personId;
}

/** A person's own password change: the current password must match; every session of theirs ends. */
export async function changeOwnPassword(db: Db, actor: Actor, change: PasswordChange): Promise<void> {
  const personId = ownPersonId(actor);
  const found = await db.execute<{ password_hash: string | null }>(sql`SELECT password_hash FROM people WHERE id = ${personId} AND disabled_at IS NULL`);
  const current = found.rows[0];
  if (!current) throw new AppError("unauthorized", "this account no longer exists or is disabled");
  if (current.password_hash === null) throw new AppError("forbidden", "this account signs in with single sign-on (OpenID Connect); its password is kept by the provider");
  if (!(await verifyPassword(change.currentPassword, current.password_hash))) throw new AppError("invalid", "currentPassword is wrong", "currentPassword");
  const hash = await hashPassword(change.newPassword);
  await db.transaction(async (tx) => {
    await tx.execute(sql`UPDATE people SET password_hash = ${hash} WHERE id = ${personId}`);
    const signedOut = await deletePersonSessions(tx, personId);
    await recordAudit(tx, actor, { action: "person.password", targetType: "person", targetId: actor.name, after: { changed: "password", signedOut } });
  });
}

/**
 * The person a (name, password) pair signs in as, or null (unknown, disabled or wrong password).
 * An unknown name is verified against a decoy hash, so the time taken does not say which exist.
 */
export async function authenticatePerson(db: Db, name: string, password: string): Promise<{ id: number; name: string; role: Role } | null> {
  const found = await db.execute<{ id: string; name: string; role: string; password_hash: string | null; disabled: boolean }>(
    sql`SELECT id, name, role, password_hash, disabled_at IS NOT NULL AS disabled FROM people WHERE name = ${name}`,
  );
  const row = found.rows[0];
  const ok = await verifyPassword(password, row?.password_hash ?? (await decoyHash()));
  if (!row || row.password_hash === null || !ok || row.disabled) return null;
  return { id: Number(row.id), name: row.name, role: toRole(row.role) };
}
