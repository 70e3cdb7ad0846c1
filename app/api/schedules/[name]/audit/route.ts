import { parseAuditQuery } from "@/lib/audit/filter";
import { listAudit } from "@/lib/audit/queries";
import { getDb } from "@/lib/server/db";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** One schedule's audit entries, newest first (also those from before a rename or after a delete). */
export const GET = route<{ name: string }>(async (req, { params }) => {
  const { name } = await params;
  const filter = parseAuditQuery(new URL(req.url).searchParams);
  return Response.json(await listAudit(getDb(), { ...filter, schedule: name }));
});
