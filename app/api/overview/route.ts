import { getOverviewTotals } from "@/lib/health/overview";
import { getDb } from "@/lib/server/db";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

export const GET = route(async () => Response.json({ totals: await getOverviewTotals(getDb()) }));
