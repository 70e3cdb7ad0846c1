import { operatorSkipRoute } from "@/lib/server/operator-skip-route";

export const dynamic = "force-dynamic";

/** POST /api/runs/{id}/discard { reason? } → { run: { id, scheduleId, state: "skipped", skipReason: "discarded", reason } }: a dead run, so its schedule stops failing; 404 unknown, 409 in any other state. */
export const POST = operatorSkipRoute("discard");
