import { sql } from "drizzle-orm";
import type { Actor } from "../audit/record";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import { nameParam } from "../schedules/http";
import { getScheduleByName } from "../schedules/queries";
import { carriesAnyTag } from "../schedules/tag-reach";

/**
 * A tag-restricted API token (actor.scheduleTags) sees and changes only schedules that carry at
 * least one of its tags, and their runs and audit entries. Routes marked `tagAware` call these;
 * every other route refuses such a token (lib/server/route.ts). Anything out of its reach answers
 * 404, as if it did not exist, so a restricted token cannot probe for names.
 */

/** Whether a schedule with these tags is within the actor's reach. */
export function tagsWithinReach(actor: Actor, tags: readonly string[]): boolean {
  return !actor.scheduleTags || tags.some((t) => actor.scheduleTags!.includes(t));
}

/**
 * Throw 404 unless the live schedule `name` is within the actor's reach (no-op for unrestricted
 * callers). The name is resolved by the one by-name lookup (lib/schedules/queries.ts), so the tags
 * checked are those of the live schedule a `[name]` route acts on, never those of a deleted one
 * that once had the name.
 */
export async function requireScheduleInReach(db: Db, actor: Actor, name: string): Promise<void> {
  if (!actor.scheduleTags) return;
  const s = await getScheduleByName(db, name);
  if (!s || !tagsWithinReach(actor, s.tags)) throw new AppError("not_found", `no schedule named "${name}"`, "name");
}

/** Throw 404 unless run `id` belongs to a schedule within the actor's reach. */
export async function requireRunInReach(db: Db, actor: Actor, id: number): Promise<void> {
  if (!actor.scheduleTags) return;
  const visible = await runIdsInReach(db, actor, [id]);
  if (!visible.includes(id)) throw new AppError("not_found", `run ${id} does not exist`, "id");
}

/** The subset of run ids whose schedules are within the actor's reach. */
export async function runIdsInReach(db: Db, actor: Actor, ids: number[]): Promise<number[]> {
  if (!actor.scheduleTags) return ids;
  const r = await db.execute<{ id: number }>(sql`
    SELECT r.id FROM runs r JOIN schedules s ON s.id = r.schedule_id
    WHERE r.id = ANY(${sql.param(ids)}::bigint[]) AND ${carriesAnyTag(actor.scheduleTags)}`);
  return r.rows.map((x) => Number(x.id));
}

/** Throw 403 unless a schedule being created or edited with `tags` stays within the actor's reach. */
export function requireTagsInReach(actor: Actor, tags: readonly string[] | undefined, field = "tags"): void {
  if (!actor.scheduleTags || (tags && tagsWithinReach(actor, tags))) return;
  throw new AppError("forbidden", `this token is restricted to schedules tagged ${actor.scheduleTags.join(", ")}: the schedule must carry one of those tags`, field);
}

/** The schedule name of a `[name]` route, decoded, once it is known to be within the actor's reach (404 otherwise). */
export async function scheduleNameInReach(db: Db, actor: Actor, raw: string): Promise<string> {
  const name = nameParam(raw);
  await requireScheduleInReach(db, actor, name);
  return name;
}
