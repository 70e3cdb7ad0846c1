import { and, arrayContains, arrayOverlaps, asc, eq, gt, ilike, isNull, or, type SQL } from "drizzle-orm";
import type { Db } from "../db/client";
import { schedules, type Schedule } from "../db/schema";
import { AppError } from "../errors";
import { getScheduleHealth, type ScheduleHealth } from "../health/schedule-health";
import { containsPattern } from "./search-probe";
import { toScheduleView, type ScheduleWithHealth } from "./view";

type Reader = Pick<Db, "select">;

/**
 * The one way to look a schedule up by its name (the API's identity for it). Names are unique
 * among live schedules; a schedule deleted with its history kept gives its name up, so a name
 * may also belong to deleted schedules (`scheduleIdsByName`).
 */
const liveNamed = (name: string) => and(eq(schedules.name, name), isNull(schedules.deletedAt));

/**
 * The live schedule with this name, or null. With `lock`, inside a transaction, the row stays
 * locked (FOR UPDATE) until it ends: what an edit reads is what it changes.
 */
export async function getScheduleByName(db: Reader, name: string, opts: { lock?: boolean } = {}): Promise<Schedule | null> {
  const q = db.select().from(schedules).where(liveNamed(name)).limit(1);
  const rows = opts.lock ? await q.for("update") : await q;
  return rows[0] ?? null;
}

/** The live schedule with this name, or a 404 naming `field` (the request's field that held the name, "name" unless told). */
export async function requireScheduleByName(db: Reader, name: string, opts: { lock?: boolean; field?: string } = {}): Promise<Schedule> {
  const row = await getScheduleByName(db, name, opts);
  if (!row) throw new AppError("not_found", `no schedule named "${name}"`, opts.field ?? "name");
  return row;
}

/** Every schedule that has had this name and still has runs to show: the live one and those deleted with their history. */
export async function scheduleIdsByName(db: Reader, name: string): Promise<number[]> {
  const rows = await db.select({ id: schedules.id }).from(schedules).where(eq(schedules.name, name));
  return rows.map((r) => r.id);
}

/** Filters and keyset page for the schedule list; `cursor` is the last name of the previous page. */
export type ListSchedulesOptions = {
  search?: string;
  enabled?: boolean;
  limit?: number;
  cursor?: string;
  /** Only schedules with at least one of these tags (a tag-restricted token's view). */
  anyTags?: string[];
  /** Only schedules carrying this tag. */
  tag?: string;
  /** Only schedules of this owner (exact). */
  owner?: string;
};

/** Live schedules ordered by name, keyset-paginated: `nextCursor` is null on the last page. */
export async function listSchedules(db: Reader, o: ListSchedulesOptions = {}): Promise<{ schedules: Schedule[]; nextCursor: string | null }> {
  const limit = Math.min(Math.max(o.limit ?? 100, 1), 500);
  const where: (SQL | undefined)[] = [isNull(schedules.deletedAt)];
  if (o.enabled !== undefined) where.push(eq(schedules.enabled, o.enabled));
  if (o.cursor !== undefined) where.push(gt(schedules.name, o.cursor));
  if (o.anyTags) where.push(arrayOverlaps(schedules.tags, o.anyTags));
  if (o.tag !== undefined) where.push(arrayContains(schedules.tags, [o.tag]));
  if (o.owner !== undefined) where.push(eq(schedules.owner, o.owner));
  if (o.search) {
    const pattern = containsPattern(o.search);
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

/** Health numbers shown on a schedule and on the list (lib/health/schedule-health.ts). */
export type ScheduleHealthFields = Pick<ScheduleHealth, "sinceLastSuccessSeconds" | "deadRuns" | "oldestPendingAgeSeconds" | "status" | "unservedHandler"> & {
  /** A run of the schedule is stuck (lib/runs/stuck.ts), and since when; false and null otherwise. */
  stuck: boolean;
  stuckSince: string | null;
};

/** Schedules as API views with their health numbers, read in one pass over their ids. */
export async function toScheduleViewsWithHealth(db: Db, rows: Schedule[], pollIntervalMs?: number): Promise<ScheduleWithHealth[]> {
  const health = await getScheduleHealth(db, rows.map((r) => r.id));
  return rows.map((r) => {
    const h = health.get(r.id);
    const view = toScheduleView(r, pollIntervalMs);
    return h ? { ...view, sinceLastSuccessSeconds: h.sinceLastSuccessSeconds, deadRuns: h.deadRuns, oldestPendingAgeSeconds: h.oldestPendingAgeSeconds, status: h.status, unservedHandler: h.unservedHandler, stuck: h.stuckRun !== null, stuckSince: h.stuckRun?.since ?? null } : view;
  });
}
