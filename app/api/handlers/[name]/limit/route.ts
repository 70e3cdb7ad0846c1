import { parseHandlerLimitInput, setHandlerLimit } from "@/lib/handlers/limits";
import { getDb } from "@/lib/server/db";
import { mutation, readJson } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/**
 * PUT /api/handlers/{name}/limit, body { "maxConcurrent": n | null } → { handler, maxConcurrent }:
 * at most n runs of the handler at once across every worker; null removes the limit.
 */
export const PUT = mutation<{ name: string }>(async (req, { params }, actor) => {
  const { maxConcurrent } = parseHandlerLimitInput(await readJson(req));
  return Response.json(await setHandlerLimit(getDb(), (await params).name, maxConcurrent, actor));
});
