import { sql } from "drizzle-orm";
import { getDb, getLog } from "@/lib/server/db";

export const dynamic = "force-dynamic";

/** `{ ok: true, database: "up" }`, or 503 with `database: "down"` when a query cannot run. */
export async function GET() {
  try {
    await getDb().execute(sql`SELECT 1`);
    return Response.json({ ok: true, database: "up" });
  } catch (err) {
    getLog().warn({ event: "health:database:down", err });
    return Response.json({ ok: false, database: "down" }, { status: 503 });
  }
}
