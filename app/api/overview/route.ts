import { getOverviewTotals, listOverviewSchedules } from "@/lib/health/overview";
import { getDb } from "@/lib/server/db";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** Totals for the header and every live schedule with its health (since last success, dead runs, oldest pending age, status). */
export const GET = route(async () => {
  const db = getDb();
  const [totals, schedules] = await Promise.all([getOverviewTotals(db), listOverviewSchedules(db)]);
  return Response.json({ totals, schedules });
});
