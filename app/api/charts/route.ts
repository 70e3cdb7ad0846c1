import { getHealthCharts, parseChartWindow } from "@/lib/health/charts";
import { listSchedules, requireScheduleByName } from "@/lib/schedules/queries";
import { getReadDb } from "@/lib/server/replica";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** Per-schedule lines are capped so a chart stays readable and its query bounded. */
const MAX_SERIES = 12;

/**
 * GET /api/charts?window=1h|24h|7d[&schedule=name] — runs by outcome, since-last-success and
 * oldest-pending-age over time, for one schedule or the first 12 live schedules by name.
 */
export const GET = route(async (req) => {
  const params = new URL(req.url).searchParams;
  const window = parseChartWindow(params.get("window"));
  const name = params.get("schedule");
  const db = getReadDb();
  const schedules = name
    ? [await requireScheduleByName(db, name, { field: "schedule" })]
    : (await listSchedules(db, { limit: MAX_SERIES })).schedules;
  return Response.json(await getHealthCharts(db, schedules.map((s) => ({ id: s.id, name: s.name })), window));
}, { reads: "replica" });
