import { AppError } from "@/lib/errors";
import { parseScheduleInput, TAG_PATTERN } from "@/lib/schedules/input";
import { scheduleResponse, webConfig } from "@/lib/schedules/http";
import { createSchedule } from "@/lib/schedules/mutations";
import { listSchedules, toScheduleViewsWithHealth } from "@/lib/schedules/queries";
import { getDb } from "@/lib/server/db";
import { mutation, readJson, route } from "@/lib/server/route";
import { requireTagsInReach } from "@/lib/server/tag-scope";

export const dynamic = "force-dynamic";

/** GET /api/schedules?search=&enabled=true|false&tag=&owner=&limit=&cursor= → { schedules, nextCursor } */
export const GET = route(async (req, _ctx, actor) => {
  const p = new URL(req.url).searchParams;
  const enabled = p.get("enabled");
  if (enabled !== null && enabled !== "true" && enabled !== "false") throw new AppError("invalid", "enabled must be true or false", "enabled");
  const limit = p.get("limit");
  if (limit !== null && !/^\d+$/.test(limit)) throw new AppError("invalid", "limit must be a positive whole number", "limit");
  const tag = p.get("tag");
  if (tag !== null && !TAG_PATTERN.test(tag)) throw new AppError("invalid", "tag is 1 to 64 letters, digits and . _ : -", "tag");
  const db = getDb();
  const page = await listSchedules(db, {
    search: p.get("search") ?? undefined,
    enabled: enabled === null ? undefined : enabled === "true",
    limit: limit === null ? undefined : Number(limit),
    cursor: p.get("cursor") ?? undefined,
    tag: p.get("tag") ?? undefined,
    owner: p.get("owner") ?? undefined,
    anyTags: actor.scheduleTags,
  });
  return Response.json({ schedules: await toScheduleViewsWithHealth(db, page.schedules, webConfig().pollIntervalMs), nextCursor: page.nextCursor });
}, { tagAware: true });

/** POST /api/schedules (the design's schedule body) → 201 { schedule } */
export const POST = mutation(async (req, _ctx, actor) => {
  const input = parseScheduleInput(await readJson(req), "create", { payloadMaxBytes: webConfig().payloadMaxBytes });
  // A restricted token creates only schedules it can see afterwards (`tags`, from the schedule input).
  requireTagsInReach(actor, (input as { tags?: string[] }).tags);
  const db = getDb();
  return scheduleResponse(db, await createSchedule(db, input, actor), 201, { warn: true });
}, { tagAware: true });
