import { listRuns, parseRunQuery } from "@/lib/runs/history";
import { scheduleIdsByName } from "@/lib/schedules/queries";
import { getReadDb } from "@/lib/server/replica";
import { route } from "@/lib/server/route";

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
  // Live and deleted-with-history schedules of that name: their runs are still runs. A
  // tag-restricted token sees only the runs of schedules carrying one of its tags.
  const scheduleIds = name ? await scheduleIdsByName(db, name) : undefined;
  return Response.json(await listRuns(db, { ...filter, scheduleIds, tags: actor.scheduleTags }));
}, { tagAware: true, reads: "replica" });
