import { listWorkers } from "@/lib/workers/queries";
import { getReadDb } from "@/lib/server/replica";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

export const GET = route(async () => Response.json({ workers: await listWorkers(getReadDb()) }), { reads: "replica" });
