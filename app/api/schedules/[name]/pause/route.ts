import { scheduleResponse } from "@/lib/schedules/http";
import { pauseSchedule } from "@/lib/schedules/mutations";
import { parsePauseInput } from "@/lib/schedules/pause-input";
import { getDb } from "@/lib/server/db";
import { mutation, readJson } from "@/lib/server/route";
import { scheduleNameInReach } from "@/lib/server/tag-scope";

export const dynamic = "force-dynamic";

/** POST /api/schedules/{name}/pause, optional body { note?, resumeAt? } → { schedule } */
export const POST = mutation<{ name: string }>(async (req, { params }, actor) => {
  const db = getDb();
  const hold = parsePauseInput(req.headers.get("content-type") ? await readJson(req) : {});
  return scheduleResponse(db, await pauseSchedule(db, await scheduleNameInReach(db, actor, (await params).name), actor, hold));
}, { tagAware: true });
