import { parseAuditQuery } from "@/lib/audit/filter";
import { listAudit } from "@/lib/audit/queries";
import { getDb } from "@/lib/server/db";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** The audit log, newest first: `?schedule=&actor=&action=&from=&to=&cursor=&limit=`. Read-only by design. */
export const GET = route(async (req) => Response.json(await listAudit(getDb(), parseAuditQuery(new URL(req.url).searchParams))));
