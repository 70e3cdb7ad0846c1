/**
 * Pause or resume every schedule that matches a filter, resolved on the server (the same search,
 * tag and owner filters as GET /api/schedules, plus a health status). Each schedule changes in its
 * own transaction through the same mutation as a single pause or resume, so each is audited, and
 * one that someone else changed meanwhile is simply counted as already so.
 */
import { z } from "zod";
import type { Actor } from "../audit/record";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import type { Schedule } from "../db/schema";
import { getScheduleHealth } from "../health/schedule-health";
import { pauseSchedule, resumeSchedule } from "../schedules/mutations";
import { listSchedules } from "../schedules/queries";
import type { BulkSchedulesRequest, ScheduleBulkFilter } from "./filter-input";

/** The most schedules one bulk call changes; more matches are reported in `remaining` for a second call. */
export const MAX_BULK_SCHEDULES = 10_000;

export const bulkSchedulesResultSchema = z
  .object({ action: z.enum(["pause", "resume"]), dryRun: z.boolean(), matched: z.number().int(), changed: z.array(z.string()), remaining: z.number().int() })
  .strict();
export type BulkSchedulesResult = z.infer<typeof bulkSchedulesResultSchema>;

/** Names of the live schedules the filter matches that the action would change (pause: enabled ones; resume: paused ones). */
export async function matchingSchedules(db: Db, filter: ScheduleBulkFilter, action: "pause" | "resume", anyTags?: string[]): Promise<string[]> {
  const out: string[] = [];
  for (let cursor: string | undefined; ; ) {
    const page = await listSchedules(db, { search: filter.search, tag: filter.tag, owner: filter.owner, anyTags, enabled: action === "resume" ? false : true, limit: 500, cursor });
    const rows = filter.status ? await withStatus(db, page.schedules, filter.status) : page.schedules;
    out.push(...rows.map((s) => s.name));
    if (!page.nextCursor) return out;
    cursor = page.nextCursor;
  }
}

async function withStatus(db: Db, rows: Schedule[], status: NonNullable<ScheduleBulkFilter["status"]>): Promise<Schedule[]> {
  const health = await getScheduleHealth(db, rows.map((r) => r.id));
  return rows.filter((r) => health.get(r.id)?.status === status);
}

/** Run (or, with dryRun, count) a bulk pause or resume; `anyTags` is a tag-restricted caller's reach. */
export async function bulkSchedules(db: Db, req: BulkSchedulesRequest, actor: Actor, anyTags?: string[]): Promise<BulkSchedulesResult> {
  const names = await matchingSchedules(db, req.filter, req.action, anyTags);
  const batch = names.slice(0, MAX_BULK_SCHEDULES);
  const result = { action: req.action, dryRun: req.dryRun === true, matched: names.length, changed: [] as string[], remaining: names.length - batch.length };
  if (req.dryRun) return { ...result, changed: batch };
  for (const name of batch) {
    const after = await (req.action === "pause" ? pauseSchedule(db, name, actor, req.note ? { note: req.note } : {}) : resumeSchedule(db, name, actor)).catch((err: unknown) => {
      // Deleted since it matched: nothing to change.
      if (err instanceof AppError && err.kind === "not_found") return null;
      throw err;
    });
    if (after) result.changed.push(name);
  }
  return result;
}
