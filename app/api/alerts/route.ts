import { listFiringAlerts } from "@/lib/alerts/history";
import { getReadDb } from "@/lib/server/replica";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** The (schedule, rule) alerts firing right now. */
export const GET = route(async () => Response.json({ firing: await listFiringAlerts(getReadDb()) }), { reads: "replica" });
