import { idempotencyKey } from "@/lib/runs/idempotency";
import { runNow } from "@/lib/schedules/mutations";
import { getDb } from "@/lib/server/db";
import { mutation } from "@/lib/server/route";
import { scheduleNameInReach } from "@/lib/server/tag-scope";

export const dynamic = "force-dynamic";

/** POST /api/schedules/{name}/run-now → { run: { id, scheduleId, scheduledFor, origin, state, idempotencyKey } } */
export const POST = mutation<{ name: string }>(async (_req, { params }, actor) => {
  const db = getDb();
  const run = await runNow(db, await scheduleNameInReach(db, actor, (await params).name), actor);
  const scheduledFor = new Date(run.scheduledFor);
  return Response.json({
    run: {
      id: run.id,
      scheduleId: run.scheduleId,
      scheduledFor: scheduledFor.toISOString(),
      origin: run.origin,
      state: run.state,
      idempotencyKey: idempotencyKey(run.scheduleId, scheduledFor, run.origin, run.id),
    },
  });
}, { tagAware: true });
