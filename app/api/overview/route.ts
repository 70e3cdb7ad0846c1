import { loadConfig } from "@/lib/config";
import { sharedOverview } from "@/lib/health/overview-shared";
import { getReadDb } from "@/lib/server/replica";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/**
 * Totals, counts by status, the worst 50 by since-last-success and by oldest pending, and the due
 * runs' waits (lib/health/fleet-summary.ts); one reading shared by every reader for
 * SLOTKEEPER_OVERVIEW_MAX_AGE_MS (lib/health/overview-shared.ts).
 */
export const GET = route(async () => Response.json(await sharedOverview(getReadDb(), loadConfig().overviewMaxAgeMs)), { reads: "replica" });
