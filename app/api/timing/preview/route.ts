import { sql } from "drizzle-orm";
import { describeTiming, previewTiming } from "@/lib/previews/timing";
import { getDb } from "@/lib/server/db";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/**
 * GET /api/timing/preview?cron=…&timezone=…|everySeconds=…&count=5 — the next fire times after
 * the database clock, and a human description. An invalid expression is not a failed request:
 * the answer carries `error` ({ code, message, field }) so a form can show it beside the field.
 */
export const GET = route(async (req) => {
  const p = new URL(req.url).searchParams;
  const r = await getDb().execute<{ now: Date }>(sql`SELECT sk_now() AS now`);
  const now = new Date(r.rows[0].now);
  const input = { cron: p.get("cron"), everySeconds: p.get("everySeconds"), timezone: p.get("timezone"), count: p.get("count") };
  const preview = previewTiming(input, now);
  return Response.json({ ...preview, description: preview.error ? null : describeTiming(input) });
}, { tagAware: true });
