import { and, arrayOverlaps, asc, eq, gt, ilike, isNull, or, type SQL } from "drizzle-orm";
import type { Db } from "../db/client";
import { schedules, type Schedule } from "../db/schema";
import { getScheduleHealth, type ScheduleHealth } from "../health/schedule-health";
import { toScheduleView, type ScheduleView } from "./view";

type Reader = Pick<Db, "select">;

/** The live (not deleted) schedule with this name, or null. */
export async function getScheduleByName(db: Reader, name: string): Promise<Schedule | null> {
  const rows = await db
    .select()
    .from(schedules)
    .where(and(eq(schedules.name, name), isNull(schedules.deletedAt)))
    .limit(1);
  return rows[0] ?? null;
}

/** Filters and keyset page for the schedule list; `cursor` is the last name of the previous page. */
export type ListSchedulesOptions = {
  search?: string;
  enabled?: boolean;
  limit?: number;
  cursor?: string;
  /** Only schedules with at least one of these tags (a tag-restricted token's view). */
  anyTags?: string[];
};

/** Live schedules ordered by name, keyset-paginated: `nextCursor` is null on the last page. */
export async function listSchedules(db: Reader, o: ListSchedulesOptions = {}): Promise<{ schedules: Schedule[]; nextCursor: string | null }> {
  const limit = Math.min(Math.max(o.limit ?? 100, 1), 500);
  const where: (SQL | undefined)[] = [isNull(schedules.deletedAt)];
  if (o.enabled !== undefined) where.push(eq(schedules.enabled, o.enabled));
  if (o.cursor !== undefined) where.push(gt(schedules.name, o.cursor));
  if (o.anyTags) where.push(arrayOverlaps(schedules.tags, o.anyTags));
  if (o.search) {
    const pattern = `%${o.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    where.push(or(ilike(schedules.name, pattern), ilike(schedules.handler, pattern), ilike(schedules.description, pattern)));
  }
  const rows = await db
    .select()
    .from(schedules)
    .where(and(...where))
    .orderBy(asc(schedules.name))
    .limit(limit + 1);
  const page = rows.slice(0, limit);
  return { schedules: page, nextCursor: rows.length > limit ? page[page.length - 1].name : null };
}

/** Health numbers shown on a schedule and on the list (design: "A schedule's health"). */
export type ScheduleHealthFields = Pick<ScheduleHealth, "sinceLastSuccessSeconds" | "deadRuns" | "oldestPendingAgeSeconds" | "status">;

/** Schedules as API views with their health numbers, read in one pass over their ids. */
export async function toScheduleViewsWithHealth(db: Db, rows: Schedule[], pollIntervalMs?: number): Promise<(ScheduleView & Partial<ScheduleHealthFields>)[]> {
  const health = await getScheduleHealth(db, rows.map((r) => r.id));
  return rows.map((r) => {
    const h = health.get(r.id);
    const view = toScheduleView(r, pollIntervalMs);
    return h ? { ...view, sinceLastSuccessSeconds: h.sinceLastSuccessSeconds, deadRuns: h.deadRuns, oldestPendingAgeSeconds: h.oldestPendingAgeSeconds, status: h.status } : view;
  });
}
