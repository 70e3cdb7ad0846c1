/**
 * An operator settles a run by hand: cancel a pending run (one no worker has claimed yet) or
 * discard a dead one. Either way the run becomes skipped and leaves run_queue in the same
 * statement, so it is neither claimable nor counted as dead: a schedule whose dead runs are all
 * discarded stops failing (lib/health/schedule-health.ts counts dead queue rows), and its failing
 * alert resolves on the next evaluation. Who did it and why is the audit entry (`run.cancel`,
 * `run.discard`), written in the same transaction; the run's own skip_reason says which
 * (`cancelled`, `discarded`).
 */
import { sql } from "drizzle-orm";
import { z } from "zod";
import { recordAudit, type Actor } from "../audit/record";
import type { Db } from "../db/client";
import { AppError } from "../errors";

export type OperatorSkipKind = "cancel" | "discard";
/** The skip reasons an operator gives a run by hand. */
export const OPERATOR_SKIP_REASONS = ["cancelled", "discarded"] as const;
export type OperatorSkipReason = (typeof OPERATOR_SKIP_REASONS)[number];

const RULES: Record<OperatorSkipKind, { from: "pending" | "dead"; reason: OperatorSkipReason; action: string; refusal: string }> = {
  cancel: { from: "pending", reason: "cancelled", action: "run.cancel", refusal: "only a pending run that no worker has started can be cancelled" },
  discard: { from: "dead", reason: "discarded", action: "run.discard", refusal: "only a dead run can be discarded" },
};

/** A run an operator cancelled or discarded: the `run` of the answer. */
export const operatorSkipResultSchema = z
  .object({ id: z.number().int(), scheduleId: z.number().int(), state: z.literal("skipped"), skipReason: z.enum(OPERATOR_SKIP_REASONS), reason: z.string().nullable() })
  .strict();
export type OperatorSkipResult = z.infer<typeof operatorSkipResultSchema>;

/**
 * Cancel (pending → skipped) or discard (dead → skipped) run `id`, with the operator's `reason`.
 * 404 when the run does not exist, 409 when it is in another state (running counts: a claimed
 * run's queue row says running while its record still says pending).
 */
export async function skipRunByOperator(db: Db, id: number, kind: OperatorSkipKind, actor: Actor, reason: string | null = null): Promise<OperatorSkipResult> {
  const rule = RULES[kind];
  const from = sql.raw(`'${rule.from}'`);
  const skipped = sql.raw(`'${rule.reason}'`);
  return db.transaction(async (tx) => {
    // The queue row is locked first, as every writer of an unfinished run does; a worker's claim
    // skips a locked row, and a row claimed meanwhile no longer matches the state and is left alone.
    const moved = await tx.execute<{ id: number; schedule_id: number; attempts: number; last_error: string | null }>(sql`
      WITH target AS (
        SELECT q.ctid, r.id
        FROM runs r
        CROSS JOIN LATERAL (
          SELECT q.ctid FROM run_queue q
          WHERE q.state = ${from} AND q.schedule_id = r.schedule_id AND q.scheduled_for = r.scheduled_for AND q.run_id = r.id
          FOR UPDATE
        ) q
        WHERE r.id = ${id} AND r.state = ${from}
      ),
      unqueued AS (
        DELETE FROM run_queue q USING target t WHERE q.ctid = t.ctid
      )
      UPDATE runs r SET state = 'skipped', skip_reason = ${skipped}, finished_at = sk_now(), skipped_until = r.scheduled_for, skipped_count = 1
      FROM target t
      WHERE r.id = t.id
      RETURNING r.id, r.schedule_id, r.attempts, r.last_error`);
    const row = moved.rows[0];
    if (!row) {
      const now = await tx.execute<{ state: string }>(sql`SELECT state::text AS state FROM run_status WHERE id = ${id}`);
      const state = now.rows[0]?.state;
      if (!state) throw new AppError("not_found", `run ${id} does not exist`, "id");
      throw new AppError("conflict", `run ${id} is ${state}: ${rule.refusal}`, "id");
    }
    await recordAudit(tx, actor, {
      action: rule.action,
      targetType: "run",
      targetId: id,
      scheduleId: Number(row.schedule_id),
      before: { state: rule.from, attempts: row.attempts, lastError: row.last_error },
      after: { state: "skipped", skipReason: rule.reason, reason },
    });
    return { id, scheduleId: Number(row.schedule_id), state: "skipped", skipReason: rule.reason, reason };
  });
}
