import { idempotencyKey } from "@/lib/runs/idempotency";
import { webConfig } from "@/lib/schedules/http";
import { runNow } from "@/lib/schedules/mutations";
import { requireScheduleByName } from "@/lib/schedules/queries";
import { parseRunNowInput } from "@/lib/schedules/run-now-input";
import { getDb } from "@/lib/server/db";
import { mutation, readJson } from "@/lib/server/route";
import { scheduleNameInReach } from "@/lib/server/tag-scope";

export const dynamic = "force-dynamic";

/**
 * POST /api/schedules/{name}/run-now, optional body { payload } (this run's payload in place of the
 * schedule's) → { run: { id, scheduleId, scheduledFor, origin, state, idempotencyKey } }
 */
export const POST = mutation<{ name: string }>(async (req, { params }, actor) => {
  const db = getDb();
  const name = await scheduleNameInReach(db, actor, (await params).name);
  const body = req.headers.get("content-type") ? await readJson(req) : {};
  const handler = (await requireScheduleByName(db, name)).handler;
  const { payload } = parseRunNowInput(body, handler, { payloadMaxBytes: webConfig().payloadMaxBytes });
  const run = await runNow(db, name, actor, { payload, handler });
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
