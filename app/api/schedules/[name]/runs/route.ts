import { listRuns, parseRunQuery } from "@/lib/runs/history";
import { requireScheduleByName } from "@/lib/schedules/queries";
import { getReadDb } from "@/lib/server/replica";
import { route } from "@/lib/server/route";
import { scheduleNameInReach } from "@/lib/server/tag-scope";

export const dynamic = "force-dynamic";

/**
 * GET /api/schedules/{name}/runs?state=&from=&to=&cursor=&limit= — the schedule's run history,
 * newest slot first, keyset-paginated on (scheduled_for, slot_seq) through runs_slot_key.
 */
export const GET = route<{ name: string }>(async (req, { params }, actor) => {
  const db = getReadDb();
  const name = await scheduleNameInReach(db, actor, (await params).name);
  const { id } = await requireScheduleByName(db, name);
  return Response.json(await listRuns(db, { ...parseRunQuery(new URL(req.url).searchParams), scheduleIds: [id] }));
}, { tagAware: true, reads: "replica" });
