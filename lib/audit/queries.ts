import { sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "../db/client";
import { scheduleIdsByName } from "../schedules/queries";
import { maskSecrets } from "../security/mask";

/** One audit entry as the API shows it (secrets in before/after masked). */
export const auditViewSchema = z
  .object({
    id: z.number().int(),
    at: z.string(),
    actor: z.string(),
    actorKind: z.string(),
    action: z.string(),
    targetType: z.string(),
    targetId: z.string().nullable(),
    scheduleId: z.number().int().nullable(),
    before: z.unknown(),
    after: z.unknown(),
  })
  .strict();
export type AuditView = z.infer<typeof auditViewSchema>;
/** A page of audit entries, newest first; `nextCursor` is the `cursor` of the next page. */
export const auditPageSchema = z.object({ entries: z.array(auditViewSchema), nextCursor: z.number().int().nullable() }).strict();

/** Filters for listAudit; every one optional. `cursor` is the last id of the previous page. */
export type AuditFilter = { schedule?: string; scheduleId?: number; actor?: string; action?: string; from?: Date; to?: Date; cursor?: number; limit?: number };

/** The largest page listAudit returns. */
export const AUDIT_PAGE_MAX = 200;

/**
 * Audit entries newest first, keyset-paginated on id (ids only grow, so a page never repeats or
 * skips an entry while new ones arrive). `schedule` matches by name, including entries about a
 * schedule that has since been deleted or renamed (its name in before/after).
 */
export async function listAudit(db: Db, f: AuditFilter): Promise<{ entries: AuditView[]; nextCursor: number | null }> {
  const limit = Math.min(Math.max(f.limit ?? 50, 1), AUDIT_PAGE_MAX);
  const where: SQL[] = [];
  if (f.scheduleId !== undefined) where.push(sql`schedule_id = ${f.scheduleId}`);
  if (f.schedule !== undefined) {
    const ids = await scheduleIdsByName(db, f.schedule);
    where.push(sql`(schedule_id = ANY(${sql.param(ids)}::bigint[])
      OR (target_type = 'schedule' AND (before->>'name' = ${f.schedule} OR after->>'name' = ${f.schedule})))`);
  }
  if (f.actor !== undefined) where.push(sql`actor = ${f.actor}`);
  if (f.action !== undefined) where.push(f.action.endsWith(".") ? sql`starts_with(action, ${f.action})` : sql`action = ${f.action}`);
  if (f.from !== undefined) where.push(sql`at >= ${f.from.toISOString()}::timestamptz`);
  if (f.to !== undefined) where.push(sql`at < ${f.to.toISOString()}::timestamptz`);
  if (f.cursor !== undefined) where.push(sql`id < ${f.cursor}`);
  const clause = where.length ? sql`WHERE ${sql.join(where, sql` AND `)}` : sql``;
  const res = await db.execute(sql`
    SELECT id, to_json(at) #>> '{}' AS at, actor, actor_kind, action, target_type, target_id, schedule_id, before, after
      FROM audit_log ${clause} ORDER BY id DESC LIMIT ${limit + 1}`);
  const rows = res.rows as Record<string, unknown>[];
  const entries = rows.slice(0, limit).map(
    (r): AuditView => ({
      id: Number(r.id),
      at: new Date(String(r.at)).toISOString(),
      actor: String(r.actor),
      actorKind: String(r.actor_kind),
      action: String(r.action),
      targetType: String(r.target_type),
      targetId: r.target_id === null ? null : String(r.target_id),
      scheduleId: r.schedule_id === null ? null : Number(r.schedule_id),
      before: maskSecrets(r.before ?? null),
      after: maskSecrets(r.after ?? null),
    }),
  );
  return { entries, nextCursor: rows.length > limit ? entries[entries.length - 1].id : null };
}
