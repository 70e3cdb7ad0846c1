import { parseBulkSchedules } from "@/lib/bulk/filter-input";
import { bulkSchedules } from "@/lib/bulk/schedules";
import { getDb } from "@/lib/server/db";
import { mutation, readJson } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/**
 * POST /api/bulk/schedules { action: "pause" | "resume", filter: { search?, tag?, owner?, status? }, note?, dryRun? }
 * → { action, dryRun, matched, changed: [names], remaining }: every matching schedule the action would change,
 * found by the server; with dryRun, the names without changing them. Each change is audited.
 */
export const POST = mutation(async (req, _ctx, actor) => {
  const body = parseBulkSchedules(await readJson(req));
  // A tag-restricted token reaches only its tags' schedules.
  return Response.json(await bulkSchedules(getDb(), body, actor, actor.scheduleTags ?? undefined));
}, { tagAware: true });
