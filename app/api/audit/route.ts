import { parseAuditQuery } from "@/lib/audit/filter";
import { listAudit } from "@/lib/audit/queries";
import { getReadDb } from "@/lib/server/replica";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** The audit log, newest first: `?schedule=&actor=&action=&from=&to=&cursor=&limit=`. Read-only by design. */
export const GET = route(async (req) => Response.json(await listAudit(getReadDb(), parseAuditQuery(new URL(req.url).searchParams))), { reads: "replica" });
