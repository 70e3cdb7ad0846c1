import { parseTokenInput } from "@/lib/auth/token-input";
import { createToken, listTokens } from "@/lib/auth/tokens";
import { getDb } from "@/lib/server/db";
import { adminMutation, adminRoute, readJson } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** Every API token (never its secret), newest first. Admins only. */
export const GET = adminRoute(async () => Response.json({ tokens: await listTokens(getDb()) }));

/** Create a token `{ name, scope, expiresAt?, scheduleTags? }`; the response holds the secret, shown this once. Admins only. */
export const POST = adminMutation(async (req, _ctx, actor) => {
  const input = parseTokenInput(await readJson(req, 4096));
  const { token, view } = await createToken(getDb(), actor, input);
  return Response.json({ token, tokenInfo: view }, { status: 201 });
});
