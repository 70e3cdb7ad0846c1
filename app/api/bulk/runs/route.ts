import { bulkRuns } from "@/lib/bulk/runs";
import { parseBulkRuns } from "@/lib/bulk/filter-input";
import { scheduleIdsByName } from "@/lib/schedules/queries";
import { getDb } from "@/lib/server/db";
import { mutation, readJson } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/**
 * POST /api/bulk/runs { action: "requeue" | "discard", filter: { schedule?, from?, to? }, reason?, dryRun? }
 * → { action, dryRun, matched, changed, remaining }: every dead run matching the filter (slot time in [from, to)),
 * found by the server; with dryRun, only the count. Each run moved is audited.
 */
export const POST = mutation(async (req, _ctx, actor) => {
  const { filter, ...body } = parseBulkRuns(await readJson(req));
  const db = getDb();
  // As GET /api/runs: a schedule name means its live and deleted-with-history schedules, within reach.
  const scheduleIds = filter.schedule ? await scheduleIdsByName(db, filter.schedule) : undefined;
  return Response.json(await bulkRuns(db, body, { scheduleIds, tags: actor.scheduleTags, from: filter.from, to: filter.to }, actor));
}, { tagAware: true });
