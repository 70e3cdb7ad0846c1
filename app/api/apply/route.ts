import { applySchedules } from "@/lib/schedules/as-code/apply";
import { parseApplyRequest } from "@/lib/schedules/as-code/request";
import { webConfig } from "@/lib/schedules/http";
import { getDb } from "@/lib/server/db";
import { mutation, readJson } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** POST /api/apply { source, prune?, dryRun?, document | schedules } → { created, updated, deleted, unchanged, keptPaused, changes } */
export const POST = mutation(async (req, _ctx, actor) => {
  const { specs, options } = parseApplyRequest(await readJson(req), { payloadMaxBytes: webConfig().payloadMaxBytes });
  return Response.json(await applySchedules(getDb(), specs, options, actor));
});
