import { skipRunByOperator } from "@/lib/runs/operator-skip";
import { parseOperatorSkipBody, runIdParam } from "@/lib/runs/operator-skip-input";
import { getDb } from "@/lib/server/db";
import { mutation, readJson } from "@/lib/server/route";
import { requireRunInReach } from "@/lib/server/tag-scope";

export const dynamic = "force-dynamic";

/** POST /api/runs/{id}/cancel { reason? } → { run: { id, scheduleId, state: "skipped", skipReason: "cancelled", reason } }: a pending run no worker has started; 404 unknown, 409 in any other state. */
export const POST = mutation<{ id: string }>(async (req, { params }, actor) => {
  const id = runIdParam((await params).id);
  // The body is optional: a POST without one carries no content type (lib/security/csrf.ts refuses a body without it).
  const { reason } = parseOperatorSkipBody(req.headers.get("content-type") ? await readJson(req) : {});
  const db = getDb();
  await requireRunInReach(db, actor, id);
  return Response.json({ run: await skipRunByOperator(db, id, "cancel", actor, reason) });
}, { tagAware: true });
