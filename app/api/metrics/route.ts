import { loadConfig } from "@/lib/config";
import { collectMetrics } from "@/lib/metrics/collect";
import { renderMetrics } from "@/lib/metrics/render";
import { getReadDb } from "@/lib/server/replica";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** Prometheus text: schedules by status and handler, rules holding, runs by state, workers alive; per-schedule series only when opted in. */
export const GET = route(async () => {
  const { text, contentType } = await renderMetrics(await collectMetrics(getReadDb(), { perSchedule: loadConfig().metricsPerSchedule }));
  return new Response(text, { headers: { "content-type": contentType, "cache-control": "no-store" } });
}, { reads: "replica" });
