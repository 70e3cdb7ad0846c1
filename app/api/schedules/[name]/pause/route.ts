import { scheduleResponse } from "@/lib/schedules/http";
import { pauseSchedule } from "@/lib/schedules/mutations";
import { getDb } from "@/lib/server/db";
import { mutation } from "@/lib/server/route";
import { scheduleNameInReach } from "@/lib/server/tag-scope";

export const dynamic = "force-dynamic";

/** POST /api/schedules/{name}/pause → { schedule } */
export const POST = mutation<{ name: string }>(async (_req, { params }, actor) => {
  const db = getDb();
  return scheduleResponse(db, await pauseSchedule(db, await scheduleNameInReach(db, actor, (await params).name), actor));
}, { tagAware: true });
