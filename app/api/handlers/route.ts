import { listKnownHandlers } from "@/lib/handlers/known";
import { listHandlerLimits } from "@/lib/handlers/limits";
import { withWarnings } from "@/lib/handlers/warnings";
import { getReadDb } from "@/lib/server/replica";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/**
 * GET /api/handlers → { handlers: [{ name, idempotent, description, warning?, maxConcurrent }] };
 * non-idempotent ones warn "this job may run twice"; maxConcurrent is the fleet-wide limit (null: none).
 */
export const GET = route(async () => {
  const db = getReadDb();
  const limits = new Map((await listHandlerLimits(db)).map((l) => [l.handler, l.maxConcurrent]));
  return Response.json({ handlers: withWarnings(await listKnownHandlers(db)).map((h) => ({ ...h, maxConcurrent: limits.get(h.name) ?? null })) });
}, { tagAware: true, reads: "replica" });
