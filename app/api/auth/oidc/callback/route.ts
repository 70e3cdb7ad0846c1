import { oidcCallback } from "@/lib/auth/oidc";
import { toResponse } from "@/lib/errors";
import { getLog } from "@/lib/server/db";

export const dynamic = "force-dynamic";

/** Where the OpenID provider sends the browser back: verify, map the role, open a session. */
export async function GET(req: Request) {
  try {
    return await oidcCallback(req);
  } catch (err) {
    return toResponse(err, (e) => getLog().error({ event: "auth:oidc:error", err: e }));
  }
}
