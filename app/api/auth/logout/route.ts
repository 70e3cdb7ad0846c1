import { logout } from "@/lib/auth/login";
import { toResponse } from "@/lib/errors";
import { getLog } from "@/lib/server/db";

export const dynamic = "force-dynamic";

/** Sign out: clears the session cookie. */
export async function POST(req: Request) {
  try {
    return await logout(req);
  } catch (err) {
    return toResponse(err, (e) => getLog().error({ event: "auth:logout:error", err: e }));
  }
}
