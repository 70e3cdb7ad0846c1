import { parseAuditQuery } from "@/lib/audit/filter";
import { listAudit } from "@/lib/audit/queries";
import { getReadDb } from "@/lib/server/replica";
import { route } from "@/lib/server/route";
import { scheduleNameInReach } from "@/lib/server/tag-scope";

export const dynamic = "force-dynamic";

/** One schedule's audit entries, newest first (also those from before a rename or after a delete). */
export const GET = route<{ name: string }>(async (req, { params }, actor) => {
  const db = getReadDb();
  const name = actor.scheduleTags ? await scheduleNameInReach(db, actor, (await params).name) : (await params).name;
  const filter = parseAuditQuery(new URL(req.url).searchParams);
  return Response.json(await listAudit(db, { ...filter, schedule: name }));
}, { tagAware: true, reads: "replica" });
