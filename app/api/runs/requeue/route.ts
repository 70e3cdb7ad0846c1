import { AppError } from "@/lib/errors";
import { requeueBodySchema, requeueRuns } from "@/lib/runs/requeue";
import { getDb } from "@/lib/server/db";
import { mutation, readJson } from "@/lib/server/route";
import { runIdsInReach } from "@/lib/server/tag-scope";

export const dynamic = "force-dynamic";

/** POST /api/runs/requeue { ids } → { requeued, notDead, missing }: re-queues the dead ones of a selection in one transaction. */
export const POST = mutation(async (req, _ctx, actor) => {
  const parsed = requeueBodySchema.safeParse(await readJson(req));
  if (!parsed.success) throw new AppError("invalid", "body must be { ids: [run ids, 1 to 1000 of them] }", "ids");
  const db = getDb();
  // Runs out of a restricted token's reach are reported as missing, as if they did not exist.
  const inReach = await runIdsInReach(db, actor, parsed.data.ids);
  const r = await requeueRuns(db, inReach, actor);
  const hidden = parsed.data.ids.filter((id) => !inReach.includes(id));
  return Response.json(hidden.length ? { ...r, missing: [...r.missing, ...hidden] } : r);
}, { tagAware: true });
