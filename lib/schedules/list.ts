/**
 * The schedule list at fleet scale: search, filters, sorts and keyset pages with no cap, all
 * resolved in the database (GET /api/schedules, the Schedules page).
 *
 * Every sort is a total order with the id as the last key, and a cursor is the last row's keys
 * (opaque: base64url JSON), so walking the pages returns each matching schedule exactly once, in
 * order, however many there are. Sorts:
 * - `name` (schedules_name_live_key), `nextDue` (next_slot_at, schedules_next_slot_idx): an index
 *   walk that stops after one page;
 * - `lastSuccess`: longest since its last success first (never succeeded first of all, by id), on
 *   the stored last success (lib/schedules/last-success.ts, schedule_last_success_order_idx): an
 *   index walk that stops after one page as well;
 * - `status`: failing, late, backlogged, healthy, paused; by name within each.
 *
 * A health status needs the cron maths (lib/health/schedule-health.ts, the one definition), so it is
 * not a column. `paused` and `failing` are exact in SQL (disabled; enabled with a dead run); for
 * late, backlogged and healthy the SQL keeps the candidates (enabled, no dead run) and the status is
 * worked out for them in chunks. Such a request looks at most SCAN_BUDGET candidates: its page can
 * be shorter than `limit`, even empty, with a `nextCursor` that goes on from the last one looked
 * at. Only a null `nextCursor` says the list is complete.
 */
import { inArray, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import type { Db } from "../db/client";
import { schedules, type Schedule } from "../db/schema";
import { AppError } from "../errors";
import { getScheduleHealth, HEALTH_STATUSES, type HealthStatus } from "../health/schedule-health";
import { TAG_PATTERN } from "./input";
import { lastSuccessFrom, lastSuccessId, lastSuccessKey } from "./last-success";
import { patternLiteral, searchCandidates } from "./search-probe";
import { carriesAnyTag } from "./tag-reach";

export const SCHEDULE_SORTS = ["name", "nextDue", "lastSuccess", "status"] as const;
export type ScheduleSort = (typeof SCHEDULE_SORTS)[number];
/** The order of `sort=status`: the most urgent first. */
export const STATUS_ORDER: readonly HealthStatus[] = ["failing", "late", "backlogged", "healthy", "paused"];
export const MAX_SCHEDULE_PAGE = 500;
/** Candidates one request looks at when a status must be worked out (late, backlogged, healthy). */
export const SCAN_BUDGET = 2_000;
const CHUNK = 250;

const bool = (field: string) => z.enum(["true", "false"], { error: `${field} must be true or false` }).transform((v) => v === "true");
const text = (field: string, max: number) => z.string().trim().min(1, { error: `${field} must not be empty (leave it out instead)` }).max(max, { error: `${field} must be at most ${max} characters` });

/** The query string of GET /api/schedules; unknown parameters are ignored, a bad one is a 400 naming it. */
export const scheduleListQuerySchema = z.object({
  search: z
    .string()
    .max(200, { error: "search must be at most 200 characters" })
    .refine((v) => !v.includes("\u0000"), { error: "search must not hold a NUL character (\\u0000)" })
    .optional(),
  status: z
    .string()
    .transform((v) => v.split(",").filter(Boolean))
    .pipe(z.array(z.enum(HEALTH_STATUSES, { error: `status must be one or more of ${HEALTH_STATUSES.join(", ")}, comma-separated` })))
    .optional(),
  tag: z.string().regex(TAG_PATTERN, { error: "tag is 1 to 64 letters, digits and . _ : -" }).optional(),
  handler: text("handler", 200).optional(),
  queue: text("queue", 200).optional(),
  owner: text("owner", 200).optional(),
  managedBy: text("managedBy", 500).optional(),
  managed: bool("managed").optional(),
  paused: bool("paused").optional(),
  enabled: bool("enabled").optional(),
  timing: z.enum(["cron", "interval"], { error: "timing must be cron or interval" }).optional(),
  sort: z.enum(SCHEDULE_SORTS, { error: `sort must be one of ${SCHEDULE_SORTS.join(", ")}` }).optional(),
  limit: z
    .string()
    .regex(/^\d+$/, { error: "limit must be a positive whole number" })
    .transform(Number)
    .pipe(z.number().int().min(1, { error: "limit must be a positive whole number" }))
    .optional(),
  cursor: z.string().max(2000, { error: "cursor is not one this API returned" }).optional(),
});
export type ScheduleListQuery = z.infer<typeof scheduleListQuerySchema> & {
  /** Only schedules with at least one of these tags (a tag-restricted token's view). */
  anyTags?: string[];
};

/** Parse GET /api/schedules' search parameters, or throw a 400 that names the first bad field. */
export function parseScheduleListQuery(params: URLSearchParams): ScheduleListQuery {
  const raw: Record<string, string> = {};
  for (const key of Object.keys(scheduleListQuerySchema.shape)) {
    const v = params.get(key);
    if (v !== null) raw[key] = v;
  }
  const r = scheduleListQuerySchema.safeParse(raw);
  if (!r.success) {
    const issue = r.error.issues[0];
    const field = String(issue.path[0] ?? "query");
    throw new AppError("invalid", issue.message, field);
  }
  return r.data;
}

type Key = { k: string; id: number };
/** One ordered stretch of the list: a status set (or none) and a sort key. sort=status is five of them. */
type Segment = { statuses: HealthStatus[] | undefined; by: "name" | "nextDue" | "lastSuccess" };

/** [sort, segment, last key or null at a segment's start, last id]. */
function encodeCursor(sort: ScheduleSort, seg: number, key: Key | null): string {
  return Buffer.from(JSON.stringify([sort, seg, key?.k ?? null, key?.id ?? 0]), "utf8").toString("base64url");
}

function decodeCursor(cursor: string, sort: ScheduleSort): { seg: number; key: Key | null } {
  try {
    const v: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (Array.isArray(v) && v.length === 4 && v[0] === sort && Number.isInteger(v[1]) && (typeof v[2] === "string" || v[2] === null) && Number.isSafeInteger(v[3])) {
      return { seg: v[1] as number, key: v[2] === null ? null : { k: v[2] as string, id: v[3] as number } };
    }
  } catch {
    // fall through
  }
  // Earlier versions' cursor was the previous page's last name (names are unique among live schedules).
  if (sort === "name") return { seg: 0, key: { k: cursor, id: Number.MAX_SAFE_INTEGER } };
  throw new AppError("invalid", "cursor is not one this API returned for this sort", "cursor");
}

const dead = sql`EXISTS (SELECT 1 FROM run_queue d WHERE d.schedule_id = s.id AND d.state = 'dead')`;

/** SQL that keeps exactly the schedules whose status can be one of these (exact for paused and failing). */
function statusCandidates(statuses: HealthStatus[]): SQL {
  const parts: SQL[] = [];
  if (statuses.includes("paused")) parts.push(sql`NOT s.enabled`);
  if (statuses.includes("failing")) parts.push(sql`(s.enabled AND ${dead})`);
  if (statuses.some((st) => st === "late" || st === "backlogged" || st === "healthy")) parts.push(sql`(s.enabled AND NOT ${dead})`);
  return parts.length ? sql`(${sql.join(parts, sql` OR `)})` : sql`false`;
}

/** `candidates`: a condition keeping every schedule the search term matches (lib/schedules/search-probe.ts). */
function filters(q: ScheduleListQuery, candidates: SQL | undefined): SQL[] {
  const w: SQL[] = [sql`s.deleted_at IS NULL`];
  if (q.search) {
    // The candidates come from schedule_search, the three fields as one text with its trigram
    // index: a match in any of the three is a match in it. The second test is the rule itself (a
    // pattern spanning two fields matches the first alone).
    // The patterns go in as literals, not parameters: every pool plans generically
    // (lib/db/client.ts), and a parameter's pattern is planned as matching 0.5 % of schedules, so a
    // rare term at fleet size walked every schedule in name order probing for it. A literal is
    // planned from its own trigrams: a rare term reads the trigram index, a common one walks the
    // sort order and stops after the page.
    const literal = patternLiteral(q.search);
    if (candidates) w.push(candidates);
    w.push(sql`(s.name ILIKE ${literal} OR s.handler ILIKE ${literal} OR s.description ILIKE ${literal})`);
  }
  if (q.tag !== undefined) w.push(sql`s.tags @> ARRAY[${q.tag}]::text[]`);
  if (q.anyTags) w.push(carriesAnyTag(q.anyTags));
  if (q.handler !== undefined) w.push(sql`s.handler = ${q.handler}`);
  if (q.queue !== undefined) w.push(sql`s.queue = ${q.queue}`);
  if (q.owner !== undefined) w.push(sql`s.owner = ${q.owner}`);
  if (q.managedBy !== undefined) w.push(sql`s.managed_by = ${q.managedBy}`);
  if (q.managed !== undefined) w.push(q.managed ? sql`s.managed_by IS NOT NULL` : sql`s.managed_by IS NULL`);
  if (q.paused !== undefined) w.push(q.paused ? sql`NOT s.enabled` : sql`s.enabled`);
  if (q.enabled !== undefined) w.push(q.enabled ? sql`s.enabled` : sql`NOT s.enabled`);
  if (q.timing !== undefined) w.push(q.timing === "cron" ? sql`s.cron IS NOT NULL` : sql`s.every_seconds IS NOT NULL`);
  return w;
}

/** Up to `n` ids and keys of the segment's candidates after `after`, in its order. */
async function keyPage(db: Pick<Db, "execute">, where: SQL[], seg: Segment, after: Key | null, n: number): Promise<Key[]> {
  const w = [...where];
  if (seg.statuses) w.push(statusCandidates(seg.statuses));
  let key: SQL;
  let id = sql`s.id`;
  let from = sql`schedules s`;
  if (seg.by === "name") {
    key = sql`s.name`;
    // name >= k lets the name index start at the cursor; names are unique among live schedules.
    if (after) w.push(sql`s.name >= ${after.k} AND (s.name > ${after.k} OR s.id > ${after.id})`);
  } else if (seg.by === "nextDue") {
    key = sql`s.next_slot_at`;
    if (after) w.push(sql`(s.next_slot_at, s.id) > (${after.k}::timestamptz, ${after.id}::bigint)`);
  } else {
    key = lastSuccessKey;
    id = lastSuccessId;
    from = lastSuccessFrom;
    if (after) w.push(sql`(${key}, ${id}) > (${after.k}::timestamptz, ${after.id}::bigint)`);
  }
  // Keys travel as text: a timestamp's text round-trips exactly (microseconds), a JS Date does not.
  const r = await db.execute<{ id: number | string; k: string }>(sql`
    SELECT s.id, (${key})::text AS k FROM ${from}
    WHERE ${sql.join(w, sql` AND `)}
    ORDER BY ${key}, ${id} LIMIT ${n}`);
  return r.rows.map((row) => ({ id: Number(row.id), k: row.k }));
}

/** Walk one segment from `after`, keeping rows whose status is asked for, until `want` rows, the end, or the budget. */
async function walkSegment(db: Db, where: SQL[], seg: Segment, after: Key | null, want: number, budget: { left: number }): Promise<{ rows: Key[]; last: Key | null; done: boolean }> {
  const check = seg.statuses?.some((st) => st === "late" || st === "backlogged" || st === "healthy") ? new Set(seg.statuses) : null;
  if (!check) {
    const keys = await keyPage(db, where, seg, after, want + 1);
    const rows = keys.slice(0, want);
    return { rows, last: rows.at(-1) ?? after, done: keys.length <= want };
  }
  const rows: Key[] = [];
  let last = after;
  while (budget.left > 0) {
    const n = Math.min(CHUNK, budget.left);
    const keys = await keyPage(db, where, seg, last, n);
    const health = await getScheduleHealth(db, keys.map((k) => k.id));
    for (const k of keys) {
      budget.left--;
      last = k;
      const st = health.get(k.id)?.status;
      if (st && check.has(st)) {
        rows.push(k);
        if (rows.length === want) return { rows, last, done: false };
      }
    }
    if (keys.length < n) return { rows, last, done: true };
  }
  return { rows, last, done: false };
}

/** One page of live schedules matching `q`; `nextCursor` is null only when nothing follows. */
export async function searchSchedules(db: Db, q: ScheduleListQuery): Promise<{ schedules: Schedule[]; nextCursor: string | null }> {
  const sort = q.sort ?? "name";
  const limit = Math.min(q.limit ?? 100, MAX_SCHEDULE_PAGE);
  const segments: Segment[] =
    sort === "status"
      ? STATUS_ORDER.filter((st) => !q.status?.length || q.status.includes(st)).map((st) => ({ statuses: [st], by: "name" }))
      : [{ statuses: q.status?.length ? q.status : undefined, by: sort }];
  const start: { seg: number; key: Key | null } = q.cursor ? decodeCursor(q.cursor, sort) : { seg: 0, key: null };
  if (start.seg < 0 || start.seg > segments.length) throw new AppError("invalid", "cursor is not one this API returned for these filters", "cursor");
  const where = filters(q, q.search ? await searchCandidates(db, q.search) : undefined);
  const budget = { left: SCAN_BUDGET };
  const keys: Key[] = [];
  let nextCursor: string | null = null;
  for (let i = start.seg, after = start.key; i < segments.length; i++, after = null) {
    const walked = await walkSegment(db, where, segments[i], after, limit - keys.length, budget);
    keys.push(...walked.rows);
    if (!walked.done) {
      // The page is full or the budget is spent: go on from the last row looked at.
      nextCursor = encodeCursor(sort, i, walked.last);
      break;
    }
    if (keys.length === limit && i + 1 < segments.length) {
      nextCursor = encodeCursor(sort, i + 1, null);
      break;
    }
  }
  if (keys.length === 0) return { schedules: [], nextCursor };
  const rows = await db.select().from(schedules).where(inArray(schedules.id, keys.map((k) => k.id)));
  const byId = new Map(rows.map((r) => [r.id, r]));
  return { schedules: keys.flatMap((k) => byId.get(k.id) ?? []), nextCursor };
}
