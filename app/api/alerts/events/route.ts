import { listAlertEvents, parseHistoryFilters } from "@/lib/alerts/history";
import { getReadDb } from "@/lib/server/replica";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** Alert history, newest first: `?schedule=&rule=&kind=&before=&limit=`, with each event's deliveries. */
export const GET = route(async (req) => {
  const filters = parseHistoryFilters(new URL(req.url).searchParams);
  return Response.json(await listAlertEvents(getReadDb(), filters));
}, { reads: "replica" });
