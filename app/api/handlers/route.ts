import { listKnownHandlers } from "@/lib/handlers/known";
import { withWarnings } from "@/lib/handlers/warnings";
import { getDb } from "@/lib/server/db";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** GET /api/handlers → { handlers: [{ name, idempotent, description, warning? }] }; non-idempotent ones warn "this job may run twice". */
export const GET = route(async () => Response.json({ handlers: withWarnings(await listKnownHandlers(getDb())) }), { tagAware: true });
