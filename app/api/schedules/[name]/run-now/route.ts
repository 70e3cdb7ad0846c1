import { idempotencyKey } from "@/lib/runs/idempotency";
import { nameParam } from "@/lib/schedules/http";
import { runNow } from "@/lib/schedules/mutations";
import { getDb } from "@/lib/server/db";
import { mutation } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** POST /api/schedules/{name}/run-now → { run: { id, scheduleId, scheduledFor, origin, state, idempotencyKey } } */
export const POST = mutation<{ name: string }>(async (_req, { params }, actor) => {
  const run = await runNow(getDb(), nameParam((await params).name), actor);
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
});
