import { parseScheduleInput } from "@/lib/schedules/input";
import { parseScheduleListQuery, searchSchedules } from "@/lib/schedules/list";
import { scheduleResponse, webConfig } from "@/lib/schedules/http";
import { createSchedule } from "@/lib/schedules/mutations";
import { toScheduleViewsWithHealth } from "@/lib/schedules/queries";
import { getDb } from "@/lib/server/db";
import { getReadDb } from "@/lib/server/replica";
import { mutation, readJson, route } from "@/lib/server/route";
import { requireTagsInReach } from "@/lib/server/tag-scope";

export const dynamic = "force-dynamic";

/**
 * GET /api/schedules?search=&status=&tag=&handler=&queue=&owner=&managedBy=&managed=&paused=&enabled=&timing=&sort=&limit=&cursor=
 * → { schedules, nextCursor }: one keyset page of the whole fleet (lib/schedules/list.ts).
 */
export const GET = route(async (req, _ctx, actor) => {
  const q = parseScheduleListQuery(new URL(req.url).searchParams);
  const db = getReadDb();
  const page = await searchSchedules(db, { ...q, anyTags: actor.scheduleTags });
  return Response.json({ schedules: await toScheduleViewsWithHealth(db, page.schedules, webConfig().pollIntervalMs), nextCursor: page.nextCursor });
}, { tagAware: true, reads: "replica" });

/** POST /api/schedules (a schedule body, docs/api.md) → 201 { schedule } */
export const POST = mutation(async (req, _ctx, actor) => {
  const input = parseScheduleInput(await readJson(req), "create", { payloadMaxBytes: webConfig().payloadMaxBytes });
  // A restricted token creates only schedules it can see afterwards (`tags`, from the schedule input).
  requireTagsInReach(actor, (input as { tags?: string[] }).tags);
  const db = getDb();
  return scheduleResponse(db, await createSchedule(db, input, actor), 201, { warn: true });
}, { tagAware: true });
