import { collectMetrics } from "@/lib/metrics/collect";
import { renderMetrics } from "@/lib/metrics/render";
import { getDb } from "@/lib/server/db";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** Prometheus text: per-schedule health, runs by state, claim/start lateness, workers alive. */
export const GET = route(async () => {
  const { text, contentType } = await renderMetrics(await collectMetrics(getDb()));
  return new Response(text, { headers: { "content-type": contentType, "cache-control": "no-store" } });
});
