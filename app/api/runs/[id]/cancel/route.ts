import { operatorSkipRoute } from "@/lib/server/operator-skip-route";

export const dynamic = "force-dynamic";

/** POST /api/runs/{id}/cancel { reason? } → { run: { id, scheduleId, state: "skipped", skipReason: "cancelled", reason } }: a pending run no worker has started; 404 unknown, 409 in any other state. */
export const POST = operatorSkipRoute("cancel");
