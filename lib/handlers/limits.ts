import { sql } from "drizzle-orm";
import { z } from "zod";
import { recordAudit, type Actor } from "../audit/record";
import type { Db } from "../db/client";
import { AppError } from "../errors";

/**
 * Fleet-wide concurrency limits per handler (handler_limits): at most `maxConcurrent` runs of the
 * handler run at once across every worker, whatever their queues and concurrency — for a handler
 * that calls something with a limit of its own (a licence, a rate-limited API, one database).
 * Stored in the database rather than in each worker's environment, so every worker applies the same
 * limit and an operator changes it without restarting any (PUT /api/handlers/{name}/limit).
 * The limited claim enforces it (lib/runs/claim/exclusive.ts).
 */
export const MAX_HANDLER_LIMIT = 10_000;

export type HandlerLimit = { handler: string; maxConcurrent: number; updatedAt: string };

export const handlerLimitBodySchema = z
  .object({
    maxConcurrent: z
      .number({ error: "maxConcurrent must be a whole number from 1, or null to remove the limit" })
      .int({ error: "maxConcurrent must be a whole number" })
      .min(1, { error: "maxConcurrent must be at least 1 (null removes the limit)" })
      .max(MAX_HANDLER_LIMIT, { error: `maxConcurrent must be at most ${MAX_HANDLER_LIMIT}` })
      .nullable(),
  })
  .strict();

/** The body of PUT /api/handlers/{name}/limit: `{ "maxConcurrent": n }`, or null to remove the limit. */
export function parseHandlerLimitInput(body: unknown): { maxConcurrent: number | null } {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new AppError("invalid", "the body must be a JSON object", "body");
  if (!("maxConcurrent" in body)) throw new AppError("invalid", "maxConcurrent is required (a whole number, or null to remove the limit)", "maxConcurrent");
  const parsed = handlerLimitBodySchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    if (issue.code === "unrecognized_keys") throw new AppError("invalid", `unknown field "${issue.keys[0]}"`, issue.keys[0]);
    throw new AppError("invalid", issue.message, issue.path.map(String).join(".") || "body");
  }
  return parsed.data;
}

/** A handler's name as a schedule's handler field allows it. */
function checkHandlerName(name: string): void {
  if (name.length < 1 || name.length > 200) throw new AppError("invalid", "a handler name is 1 to 200 characters", "handler");
}

/** Every handler limit, by name. */
export async function listHandlerLimits(db: Pick<Db, "execute">): Promise<HandlerLimit[]> {
  const r = await db.execute<{ handler: string; max_concurrent: number; updated_at: Date }>(sql`SELECT * FROM handler_limits ORDER BY handler`);
  return r.rows.map((l) => ({ handler: l.handler, maxConcurrent: l.max_concurrent, updatedAt: new Date(l.updated_at).toISOString() }));
}

/**
 * Set (or, with null, remove) a handler's fleet-wide limit, in one transaction with its audit
 * record. The handler's queued runs move to the claim that applies it, or back to the plain claim:
 * their claim rule is recomputed by sk_claim_rule, the rule's one statement.
 */
export async function setHandlerLimit(db: Db, handler: string, maxConcurrent: number | null, actor: Actor): Promise<{ handler: string; maxConcurrent: number | null }> {
  checkHandlerName(handler);
  return db.transaction(async (tx) => {
    const before = await tx.execute<{ max_concurrent: number }>(sql`SELECT max_concurrent FROM handler_limits WHERE handler = ${handler} FOR UPDATE`);
    if (maxConcurrent === null) await tx.execute(sql`DELETE FROM handler_limits WHERE handler = ${handler}`);
    else
      await tx.execute(sql`
        INSERT INTO handler_limits (handler, max_concurrent, updated_at) VALUES (${handler}, ${maxConcurrent}, sk_now())
        ON CONFLICT (handler) DO UPDATE SET max_concurrent = excluded.max_concurrent, updated_at = excluded.updated_at`);
    await tx.execute(sql`
      UPDATE run_queue q SET overlap = sk_claim_rule(s.overlap, s.max_concurrent, ${maxConcurrent !== null})
      FROM schedules s
      WHERE s.id = q.schedule_id AND q.handler = ${handler} AND q.overlap IN ('allow', 'limited')
        AND q.overlap <> sk_claim_rule(s.overlap, s.max_concurrent, ${maxConcurrent !== null})`);
    await recordAudit(tx, actor, {
      action: "handler.limit",
      targetType: "handler",
      targetId: handler,
      before: { maxConcurrent: before.rows[0]?.max_concurrent ?? null },
      after: { maxConcurrent },
    });
    return { handler, maxConcurrent };
  });
}
