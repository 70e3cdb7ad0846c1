import { revokeToken } from "@/lib/auth/tokens";
import { AppError } from "@/lib/errors";
import { getDb } from "@/lib/server/db";
import { adminMutation } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** Revoke a token: it stops working at once; the row stays for the record. Admins only. */
export const POST = adminMutation<{ id: string }>(async (_req, { params }, actor) => {
  const { id } = await params;
  if (!/^\d{1,15}$/.test(id)) throw new AppError("invalid", "token id must be a number", "id");
  return Response.json({ tokenInfo: await revokeToken(getDb(), actor, Number(id)) });
});
