import { listRuns, parseRunQuery } from "@/lib/runs/history";
import { scheduleIdsByName } from "@/lib/schedules/queries";
import { getReadDb } from "@/lib/server/replica";
import { route } from "@/lib/server/route";
import { scheduleIdsInReach } from "@/lib/server/tag-scope";

export const dynamic = "force-dynamic";

/**
 * GET /api/runs?state=dead&schedule=name&from=&to=&cursor=&limit= — runs across schedules,
 * newest slot first, keyset-paginated (`nextCursor`). An unknown schedule name lists nothing.
 */
export const GET = route(async (req, _ctx, actor) => {
  const params = new URL(req.url).searchParams;
  const filter = parseRunQuery(params);
  const db = getReadDb();
  const name = params.get("schedule");
  // Live and deleted-with-history schedules of that name: their runs are still runs.
  let scheduleIds = name ? await scheduleIdsByName(db, name) : undefined;
  const inReach = await scheduleIdsInReach(db, actor);
  if (inReach) scheduleIds = scheduleIds ? scheduleIds.filter((id) => inReach.includes(id)) : inReach;
  return Response.json(await listRuns(db, { ...filter, scheduleIds }));
}, { tagAware: true, reads: "replica" });
