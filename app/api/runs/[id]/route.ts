import { AppError } from "@/lib/errors";
import { getRunDetail } from "@/lib/runs/history";
import { getDb } from "@/lib/server/db";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** GET /api/runs/{id} — one run with its attempts (oldest first) and its idempotency key. */
export const GET = route<{ id: string }>(async (_req, { params }) => {
  const { id } = await params;
  const n = Number(id);
  if (!Number.isSafeInteger(n) || n < 1) throw new AppError("invalid", "run id must be a positive integer", "id");
  return Response.json({ run: await getRunDetail(getDb(), n) });
});
