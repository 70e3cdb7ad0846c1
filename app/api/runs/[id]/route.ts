import { AppError } from "@/lib/errors";
import { getRunDetail } from "@/lib/runs/history";
import { getReadDb } from "@/lib/server/replica";
import { route } from "@/lib/server/route";
import { requireRunInReach } from "@/lib/server/tag-scope";

export const dynamic = "force-dynamic";

/** GET /api/runs/{id} — one run with its attempts (oldest first) and its idempotency key. */
export const GET = route<{ id: string }>(async (_req, { params }, actor) => {
  const { id } = await params;
  const n = Number(id);
  if (!Number.isSafeInteger(n) || n < 1) throw new AppError("invalid", "run id must be a positive integer", "id");
  const db = getReadDb();
  await requireRunInReach(db, actor, n);
  return Response.json({ run: await getRunDetail(db, n) });
}, { tagAware: true, reads: "replica" });
