import { listWorkers } from "@/lib/workers/queries";
import { getDb } from "@/lib/server/db";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

export const GET = route(async () => Response.json({ workers: await listWorkers(getDb()) }));
