import { oidcStart } from "@/lib/auth/oidc";
import { toResponse } from "@/lib/errors";
import { getLog } from "@/lib/server/db";

export const dynamic = "force-dynamic";

/** Start single sign-on: remember the flow and send the browser to the OpenID provider. */
export async function GET(req: Request) {
  try {
    return await oidcStart(req);
  } catch (err) {
    return toResponse(err, (e) => getLog().error({ event: "auth:oidc:error", err: e }));
  }
}
