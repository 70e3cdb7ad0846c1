import { AppError } from "@/lib/errors";
import { requeueRuns } from "@/lib/runs/requeue";
import { getDb } from "@/lib/server/db";
import { mutation } from "@/lib/server/route";
import { requireRunInReach } from "@/lib/server/tag-scope";

export const dynamic = "force-dynamic";

/** POST /api/runs/{id}/requeue → { requeued: id }; 404 for an unknown run, 409 for one that is not dead. */
export const POST = mutation<{ id: string }>(async (_req, { params }, actor) => {
  const raw = (await params).id;
  const id = Number(raw);
  if (!Number.isSafeInteger(id) || id < 1) throw new AppError("invalid", `run id must be a positive integer, got ${JSON.stringify(raw)}`, "id");
  const db = getDb();
  await requireRunInReach(db, actor, id);
  const r = await requeueRuns(db, [id], actor);
  if (r.missing.length) throw new AppError("not_found", `run ${id} does not exist`);
  if (r.notDead.length) throw new AppError("conflict", `run ${id} is not dead; only dead runs can be re-queued`);
  return Response.json({ requeued: id });
}, { tagAware: true });
