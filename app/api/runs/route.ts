import { sql } from "drizzle-orm";
import { listRuns, parseRunQuery } from "@/lib/runs/history";
import { getDb } from "@/lib/server/db";
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
  const db = getDb();
  const name = params.get("schedule");
  let scheduleIds: number[] | undefined;
  if (name) {
    // Live and deleted-with-history schedules of that name: their runs are still runs.
    const r = await db.execute<{ id: number }>(sql`SELECT id FROM schedules WHERE name = ${name}`);
    scheduleIds = r.rows.map((x) => Number(x.id));
  }
  const inReach = await scheduleIdsInReach(db, actor);
  if (inReach) scheduleIds = scheduleIds ? scheduleIds.filter((id) => inReach.includes(id)) : inReach;
  return Response.json(await listRuns(db, { ...filter, scheduleIds }));
}, { tagAware: true });
