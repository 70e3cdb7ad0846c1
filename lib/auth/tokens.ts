import { createHash, randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import { recordAudit, type Actor } from "../audit/record";

/** Prefix of every token, so leaked ones are easy to grep for in logs and repositories. */
export const TOKEN_PREFIX = "skt_";

/** A token as the API lists it: never the secret, never its hash. */
export type TokenView = { id: number; name: string; role: "viewer" | "operator"; createdBy: string; createdAt: string; lastUsedAt: string | null; revokedAt: string | null };

/** The sha256 of a token, hex: what the database stores and looks up. */
export function hashToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** A token's last_used_at is written at most this often, so a busy script costs no write per call. */
const TOUCH_EVERY_SECONDS = 60;

type Row = { id: number; name: string; role: string; created_by: string; created_at: Date; last_used_at: Date | null; revoked_at: Date | null };

const toView = (r: Row): TokenView => ({
  id: r.id,
  name: r.name,
  role: r.role === "operator" ? "operator" : "viewer",
  createdBy: r.created_by,
  createdAt: r.created_at.toISOString(),
  lastUsedAt: r.last_used_at?.toISOString() ?? null,
  revokedAt: r.revoked_at?.toISOString() ?? null,
});

/** The actor a bearer token stands for, or null when it is unknown or revoked; touches last_used_at. */
export async function findTokenActor(db: Db, token: string): Promise<Actor | null> {
  if (!token.startsWith(TOKEN_PREFIX) || token.length > 200) return null;
  const { rows } = await db.$client.query<{ id: number; name: string; role: string; stale: boolean }>(
    `SELECT id, name, role, (last_used_at IS NULL OR last_used_at < sk_now() - make_interval(secs => $2)) AS stale
       FROM api_tokens WHERE token_hash = $1 AND revoked_at IS NULL`,
    [hashToken(token), TOUCH_EVERY_SECONDS],
  );
  const t = rows[0];
  if (!t) return null;
  if (t.stale) await db.$client.query(`UPDATE api_tokens SET last_used_at = sk_now() WHERE id = $1`, [t.id]);
  return { name: `token:${t.name}`, kind: "token", role: t.role === "operator" ? "operator" : "viewer" };
}

/** Tokens manage automation, not each other: only a person (or the local operator) mints or revokes one. */
export function refuseTokenActor(actor: Actor): void {
  if (actor.kind === "token") throw new AppError("forbidden", "API tokens cannot manage API tokens; use the console");
}

/** Every token, newest first, revoked ones included (the history of who had access). */
export async function listTokens(db: Db): Promise<TokenView[]> {
  const { rows } = await db.$client.query<Row>(`SELECT id, name, role, created_by, created_at, last_used_at, revoked_at FROM api_tokens ORDER BY id DESC`);
  return rows.map(toView);
}

/** Create a token and audit it in one transaction; the secret is returned this once and never stored. */
export async function createToken(db: Db, actor: Actor, input: { name: string; role: "viewer" | "operator" }): Promise<{ token: string; view: TokenView }> {
  const token = TOKEN_PREFIX + randomBytes(32).toString("base64url");
  return db.transaction(async (tx) => {
    const res = await tx.execute(sql`
      INSERT INTO api_tokens (name, role, token_hash, created_by, created_at)
      VALUES (${input.name}, ${input.role}, ${hashToken(token)}, ${actor.name}, sk_now())
      RETURNING id, name, role, created_by, created_at, last_used_at, revoked_at`);
    const view = toView(rowOf(res.rows[0]));
    await recordAudit(tx, actor, { action: "token.create", targetType: "token", targetId: view.id, after: { name: view.name, role: view.role } });
    return { token, view };
  });
}

/** Revoke a token (idempotent refusal: revoking twice is a 409) and audit it in one transaction. */
export async function revokeToken(db: Db, actor: Actor, id: number): Promise<TokenView> {
  return db.transaction(async (tx) => {
    const res = await tx.execute(sql`
      UPDATE api_tokens SET revoked_at = sk_now() WHERE id = ${id} AND revoked_at IS NULL
      RETURNING id, name, role, created_by, created_at, last_used_at, revoked_at`);
    if (!res.rows[0]) {
      const exists = await tx.execute(sql`SELECT 1 FROM api_tokens WHERE id = ${id}`);
      throw exists.rows[0] ? new AppError("conflict", `token ${id} is already revoked`) : new AppError("not_found", `no token with id ${id}`);
    }
    const view = toView(rowOf(res.rows[0]));
    await recordAudit(tx, actor, { action: "token.revoke", targetType: "token", targetId: id, before: { name: view.name, role: view.role, revoked: false }, after: { revoked: true } });
    return view;
  });
}

function rowOf(r: Record<string, unknown>): Row {
  const d = (v: unknown) => (v === null || v === undefined ? null : v instanceof Date ? v : new Date(String(v)));
  return { id: Number(r.id), name: String(r.name), role: String(r.role), created_by: String(r.created_by), created_at: d(r.created_at)!, last_used_at: d(r.last_used_at), revoked_at: d(r.revoked_at) };
}
