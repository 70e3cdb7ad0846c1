import { AppError } from "@/lib/errors";
import { backfillBodySchema, backfillSchedule } from "@/lib/schedules/backfill";
import { webConfig } from "@/lib/schedules/http";
import { getDb } from "@/lib/server/db";
import { mutation, readJson } from "@/lib/server/route";
import { scheduleNameInReach } from "@/lib/server/tag-scope";

export const dynamic = "force-dynamic";

/**
 * POST /api/schedules/{name}/backfill { from, to, dryRun? } (or ?dryRun=1) → { dryRun, slots, existing,
 * created, wouldCreate? }: one backfill run per slot in [from, to] without a row; dryRun only counts.
 */
export const POST = mutation<{ name: string }>(async (req, { params }, actor) => {
  const parsed = backfillBodySchema.safeParse(await readJson(req));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.code === "unrecognized_keys" ? issue.keys[0] : issue.path.join(".") || "body";
    throw new AppError("invalid", issue.code === "unrecognized_keys" ? `unknown field "${field}"` : issue.message, field);
  }
  const q = new URL(req.url).searchParams.get("dryRun");
  const dryRun = parsed.data.dryRun === true || q === "1" || q === "true";
  const db = getDb();
  const r = await backfillSchedule(db, await scheduleNameInReach(db, actor, (await params).name), { ...parsed.data, dryRun }, actor, webConfig().backfillMaxRuns);
  return Response.json(dryRun ? { ...r, created: 0, wouldCreate: r.created } : r);
}, { tagAware: true });
