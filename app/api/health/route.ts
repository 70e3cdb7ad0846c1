import { sql } from "drizzle-orm";
import { getDb, getLog } from "@/lib/server/db";
import { replicaStatus } from "@/lib/server/replica";

export const dynamic = "force-dynamic";

/**
 * `{ ok: true, database: "up" }`, or 503 with `database: "down"` when a query cannot run on the
 * primary. With DATABASE_READ_URL set it adds `replica` (lib/server/replica.ts ReplicaStatus):
 * where reads go, the standby's replay lag, and `warn`. A standby that is down does not make the
 * answer 503: reads fall back to the primary.
 */
export async function GET() {
  const replica = await replicaStatus().catch(() => null);
  const extra = replica?.configured ? { replica } : {};
  try {
    await getDb().execute(sql`SELECT 1`);
    return Response.json({ ok: true, database: "up", ...extra });
  } catch (err) {
    getLog().warn({ event: "health:database:down", err });
    return Response.json({ ok: false, database: "down", ...extra }, { status: 503 });
  }
}
