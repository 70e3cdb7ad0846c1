import { AppError } from "@/lib/errors";
import { documentToYaml, exportSchedules } from "@/lib/schedules/as-code/export";
import { getDb } from "@/lib/server/db";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** GET /api/export?format=json|yaml (default json) → { schedules: [body] }, which POST /api/apply accepts unchanged. */
export const GET = route(async (req) => {
  const format = new URL(req.url).searchParams.get("format") ?? "json";
  if (format !== "json" && format !== "yaml") throw new AppError("invalid", "format must be json or yaml", "format");
  const doc = await exportSchedules(getDb());
  return format === "json" ? Response.json(doc) : new Response(documentToYaml(doc), { headers: { "content-type": "application/yaml; charset=utf-8" } });
});
