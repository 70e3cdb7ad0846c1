import { skipRunByOperator, type OperatorSkipKind } from "../runs/operator-skip";
import { parseOperatorSkipBody, runIdParam } from "../runs/operator-skip-input";
import { getDb } from "./db";
import { mutation, readJson } from "./route";
import { requireRunInReach } from "./tag-scope";

/** The POST handler of /api/runs/{id}/cancel and /discard: `{ reason? }` → `{ run }`; the rule of each is in lib/runs/operator-skip.ts. */
export function operatorSkipRoute(kind: OperatorSkipKind) {
  return mutation<{ id: string }>(async (req, { params }, actor) => {
    const id = runIdParam((await params).id);
    // The body is optional: a POST without one carries no content type (lib/security/csrf.ts refuses a body without it).
    const { reason } = parseOperatorSkipBody(req.headers.get("content-type") ? await readJson(req) : {});
    const db = getDb();
    await requireRunInReach(db, actor, id);
    return Response.json({ run: await skipRunByOperator(db, id, kind, actor, reason) });
  }, { tagAware: true });
}
