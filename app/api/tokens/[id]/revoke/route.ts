import { refuseTokenActor, revokeToken } from "@/lib/auth/tokens";
import { AppError } from "@/lib/errors";
import { getDb } from "@/lib/server/db";
import { mutation } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** Revoke a token: it stops working at once; the row stays for the record. */
export const POST = mutation<{ id: string }>(async (_req, { params }, actor) => {
  refuseTokenActor(actor);
  const { id } = await params;
  if (!/^\d{1,15}$/.test(id)) throw new AppError("invalid", "token id must be a number", "id");
  return Response.json({ tokenInfo: await revokeToken(getDb(), actor, Number(id)) });
});
