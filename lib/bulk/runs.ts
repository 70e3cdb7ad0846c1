/**
 * Re-queue or discard every dead run that matches a filter (schedule name, slot window), resolved
 * on the server from run_queue's dead rows, so it reaches every match rather than the page a
 * browser shows. The runs move in batches through the same statements as the single actions
 * (lib/runs/requeue.ts, lib/runs/operator-skip.ts), so each run is audited, and a run that left
 * the dead state meanwhile is left alone.
 */
import { sql } from "drizzle-orm";
import { z } from "zod";
import type { Actor } from "../audit/record";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import { skipRunByOperator } from "../runs/operator-skip";
import { requeueRuns } from "../runs/requeue";
import type { BulkRunsRequest } from "./filter-input";
import { carriesAnyTag } from "../schedules/tag-reach";

/** The most runs one bulk call moves; more matches are reported in `remaining` for a second call. */
export const MAX_BULK_RUNS = 50_000;
const BATCH = 1000;

/** Dead runs of these schedules (ids), of schedules carrying one of these tags (a tag-restricted token's reach), in a slot window. */
export type DeadRunFilter = { scheduleIds?: number[]; tags?: string[]; from?: Date; to?: Date };
export const bulkRunsResultSchema = z
  .object({ action: z.enum(["requeue", "discard"]), dryRun: z.boolean(), matched: z.number().int(), changed: z.number().int(), remaining: z.number().int() })
  .strict();
export type BulkRunsResult = z.infer<typeof bulkRunsResultSchema>;

type Cursor = { scheduledFor: string; runId: number };

/** Dead runs matching the filter, oldest slot first, after `cursor`, at most `limit` (run_queue_dead_idx). */
async function deadRuns(db: Pick<Db, "execute">, f: DeadRunFilter, limit: number, after?: Cursor): Promise<Cursor[]> {
  if (f.scheduleIds && f.scheduleIds.length === 0) return [];
  const r = await db.execute<{ run_id: string; scheduled_for: string }>(sql`
    SELECT q.run_id, q.scheduled_for::text AS scheduled_for FROM run_queue q
    WHERE q.state = 'dead'
      ${f.scheduleIds ? sql`AND q.schedule_id = ANY(${sql.param(f.scheduleIds)}::bigint[])` : sql``}
      ${f.tags ? sql`AND EXISTS (SELECT 1 FROM schedules s WHERE s.id = q.schedule_id AND ${carriesAnyTag(f.tags)})` : sql``}
      ${f.from ? sql`AND q.scheduled_for >= ${f.from.toISOString()}::timestamptz` : sql``}
      ${f.to ? sql`AND q.scheduled_for < ${f.to.toISOString()}::timestamptz` : sql``}
      ${after ? sql`AND (q.scheduled_for, q.run_id) > (${after.scheduledFor}::timestamptz, ${after.runId})` : sql``}
    ORDER BY q.scheduled_for, q.run_id
    LIMIT ${limit}`);
  return r.rows.map((x) => ({ scheduledFor: x.scheduled_for, runId: Number(x.run_id) }));
}

/** How many dead runs match (up to the cap plus one, so a count never reads the whole queue for nothing). */
async function countDead(db: Db, f: DeadRunFilter): Promise<number> {
  return (await deadRuns(db, f, MAX_BULK_RUNS + 1)).length;
}

/** Run (or, with dryRun, count) a bulk re-queue or discard of dead runs. */
export async function bulkRuns(db: Db, req: Omit<BulkRunsRequest, "filter">, f: DeadRunFilter, actor: Actor): Promise<BulkRunsResult> {
  const matched = await countDead(db, f);
  const result: BulkRunsResult = { action: req.action, dryRun: req.dryRun === true, matched: Math.min(matched, MAX_BULK_RUNS), changed: 0, remaining: Math.max(matched - MAX_BULK_RUNS, 0) };
  if (req.dryRun) return result;
  // Batches walk the dead runs in slot order; a run that could not be moved (it left the dead
  // state meanwhile) is behind the cursor and never read twice.
  let after: Cursor | undefined;
  while (result.changed < MAX_BULK_RUNS) {
    const batch = await deadRuns(db, f, Math.min(BATCH, MAX_BULK_RUNS - result.changed), after);
    if (batch.length === 0) break;
    after = batch[batch.length - 1];
    const ids = batch.map((b) => b.runId);
    if (req.action === "requeue") {
      result.changed += (await requeueRuns(db, ids, actor)).requeued.length;
    } else {
      for (const id of ids) {
        const done = await skipRunByOperator(db, id, "discard", actor, req.reason ?? null).catch((err: unknown) => {
          if (err instanceof AppError && (err.kind === "conflict" || err.kind === "not_found")) return null;
          throw err;
        });
        if (done) result.changed += 1;
      }
    }
  }
  return result;
}
