import { createHash, randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import { recordAudit, type Actor } from "../audit/record";
import { roleOfScope, SCOPES, scopeCovers, scopeOfRole, toScope } from "./scopes";
import type { TokenInput } from "./token-input";

/** Prefix of every token, so leaked ones are easy to grep for in logs and repositories. */
export const TOKEN_PREFIX = "skt_";

/** A token as the API lists it: never the secret, never its hash. */
export const tokenViewSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    scope: z.enum(SCOPES),
    /** Empty: every schedule; otherwise only schedules with at least one of these tags. */
    scheduleTags: z.array(z.string()),
    expiresAt: z.string().nullable(),
    createdBy: z.string(),
    createdAt: z.string(),
    lastUsedAt: z.string().nullable(),
    revokedAt: z.string().nullable(),
  })
  .strict();
export type TokenView = z.infer<typeof tokenViewSchema>;

/** The sha256 of a token, hex: what the database stores and looks up. */
export function hashToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** A token's last_used_at is written at most this often, so a busy script costs no write per call. */
const TOUCH_EVERY_SECONDS = 60;

const COLUMNS = `id, name, scope, schedule_tags, expires_at, created_by, created_at, last_used_at, revoked_at`;

function toView(r: Record<string, unknown>): TokenView {
  const iso = (v: unknown) => (v === null || v === undefined ? null : (v instanceof Date ? v : new Date(String(v))).toISOString());
  return {
    id: Number(r.id),
    name: String(r.name),
    scope: toScope(String(r.scope)),
    scheduleTags: pgArray(r.schedule_tags),
    expiresAt: iso(r.expires_at),
    createdBy: String(r.created_by),
    createdAt: iso(r.created_at)!,
    lastUsedAt: iso(r.last_used_at),
    revokedAt: iso(r.revoked_at),
  };
}

/** A text[] as node-postgres hands it over (an array; a literal through some paths). */
function pgArray(v: unknown): string[] {
  if (Array.isArray(v)) return v.map(String);
  if (typeof v === "string" && v.startsWith("{")) return v.slice(1, -1).split(",").filter(Boolean).map((s) => s.replace(/^"|"$/g, ""));
  return [];
}

/**
 * The actor a bearer token stands for, or null when it is unknown, revoked or expired (by the
 * database's clock); touches last_used_at at most once a minute.
 */
export async function findTokenActor(db: Db, token: string): Promise<Actor | null> {
  if (!token.startsWith(TOKEN_PREFIX) || token.length > 200) return null;
  const { rows } = await db.$client.query<Record<string, unknown> & { stale: boolean }>(
    `SELECT ${COLUMNS}, (last_used_at IS NULL OR last_used_at < sk_now() - make_interval(secs => $2)) AS stale
       FROM api_tokens WHERE token_hash = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > sk_now())`,
    [hashToken(token), TOUCH_EVERY_SECONDS],
  );
  const row = rows[0];
  if (!row) return null;
  const t = toView(row);
  if (row.stale) await db.$client.query(`UPDATE api_tokens SET last_used_at = sk_now() WHERE id = $1`, [t.id]);
  return { name: `token:${t.name}`, kind: "token", role: roleOfScope(t.scope), scheduleTags: t.scheduleTags.length ? t.scheduleTags : undefined, token: { id: t.id, expiresAt: t.expiresAt } };
}

/**
 * A token may only mint what it could do itself: a token's new token is no broader in scope
 * and expires no later. (Routes already require the admin scope and refuse tag-restricted
 * tokens; this keeps an expiring admin token from minting a permanent one.)
 */
function refuseEscalation(actor: Actor, input: TokenInput): void {
  if (!scopeCovers(scopeOfRole(actor.role), input.scope)) throw new AppError("forbidden", `you cannot create a token with the ${input.scope} scope`, "scope");
  const limit = actor.token?.expiresAt;
  if (limit && (!input.expiresAt || new Date(input.expiresAt) > new Date(limit))) {
    throw new AppError("forbidden", `a token created by a token must expire no later than it does (${limit})`, "expiresAt");
  }
}

/** Every token, newest first, revoked and expired ones included (the history of who had access). */
export async function listTokens(db: Db): Promise<TokenView[]> {
  const { rows } = await db.$client.query(`SELECT ${COLUMNS} FROM api_tokens ORDER BY id DESC`);
  return rows.map(toView);
}

/** Create a token and audit it in one transaction; the secret is returned this once and never stored. */
export async function createToken(db: Db, actor: Actor, input: TokenInput): Promise<{ token: string; view: TokenView }> {
  refuseEscalation(actor, input);
  const token = TOKEN_PREFIX + randomBytes(32).toString("base64url");
  return db.transaction(async (tx) => {
    if (input.expiresAt) {
      const past = await tx.execute<{ past: boolean }>(sql`SELECT ${input.expiresAt}::timestamptz <= sk_now() AS past`);
      if (past.rows[0].past) throw new AppError("invalid", "expiresAt must be in the future", "expiresAt");
    }
    const res = await tx.execute(sql`
      INSERT INTO api_tokens (name, scope, schedule_tags, expires_at, token_hash, created_by, created_at)
      VALUES (${input.name}, ${input.scope}, ${sql.param(input.scheduleTags)}::text[], ${input.expiresAt ?? null}::timestamptz, ${hashToken(token)}, ${actor.name}, sk_now())
      RETURNING ${sql.raw(COLUMNS)}`);
    const view = toView(res.rows[0]);
    await recordAudit(tx, actor, {
      action: "token.create",
      targetType: "token",
      targetId: view.id,
      after: { name: view.name, scope: view.scope, scheduleTags: view.scheduleTags, expiresAt: view.expiresAt },
    });
    return { token, view };
  });
}

/** Revoke a token (revoking twice is a 409) and audit it in one transaction. */
export async function revokeToken(db: Db, actor: Actor, id: number): Promise<TokenView> {
  return db.transaction(async (tx) => {
    const res = await tx.execute(sql`UPDATE api_tokens SET revoked_at = sk_now() WHERE id = ${id} AND revoked_at IS NULL RETURNING ${sql.raw(COLUMNS)}`);
    if (!res.rows[0]) {
      const exists = await tx.execute(sql`SELECT 1 FROM api_tokens WHERE id = ${id}`);
      throw exists.rows[0] ? new AppError("conflict", `token ${id} is already revoked`) : new AppError("not_found", `no token with id ${id}`);
    }
    const view = toView(res.rows[0]);
    await recordAudit(tx, actor, { action: "token.revoke", targetType: "token", targetId: id, before: { name: view.name, scope: view.scope, revoked: false }, after: { revoked: true } });
    return view;
  });
}
