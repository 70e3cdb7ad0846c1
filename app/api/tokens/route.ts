import { parseTokenInput } from "@/lib/auth/token-input";
import { createToken, listTokens, refuseTokenActor } from "@/lib/auth/tokens";
import { getDb } from "@/lib/server/db";
import { mutation, readJson, route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** Every API token (never its secret), newest first. */
export const GET = route(async () => Response.json({ tokens: await listTokens(getDb()) }));

/** Create a token `{ name, role }`; the response holds the secret, shown this once. */
export const POST = mutation(async (req, _ctx, actor) => {
  refuseTokenActor(actor);
  const input = parseTokenInput(await readJson(req, 4096));
  const { token, view } = await createToken(getDb(), actor, input);
  return Response.json({ token, tokenInfo: view }, { status: 201 });
});
