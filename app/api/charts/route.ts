import { sql } from "drizzle-orm";
import { getHealthCharts, parseChartWindow } from "@/lib/health/charts";
import { AppError } from "@/lib/errors";
import { getDb } from "@/lib/server/db";
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
  const db = getDb();
  const r = name
    ? await db.execute<{ id: number; name: string }>(sql`SELECT id, name FROM schedules WHERE name = ${name} AND deleted_at IS NULL`)
    : await db.execute<{ id: number; name: string }>(sql`SELECT id, name FROM schedules WHERE deleted_at IS NULL ORDER BY name LIMIT ${MAX_SERIES}`);
  if (name && r.rows.length === 0) throw new AppError("not_found", `schedule "${name}" not found`, "schedule");
  const schedules = r.rows.map((s) => ({ id: Number(s.id), name: s.name }));
  return Response.json(await getHealthCharts(db, schedules, window));
});
