import { getOverview } from "@/lib/health/overview";
import { getReadDb } from "@/lib/server/replica";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** Totals, counts by status, the worst 50 by since-last-success and by oldest pending, and the due runs' waits (lib/health/fleet-summary.ts). */
export const GET = route(async () => Response.json(await getOverview(getReadDb())), { reads: "replica" });
