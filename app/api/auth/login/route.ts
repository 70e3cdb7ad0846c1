import { login } from "@/lib/auth/login";
import { toResponse } from "@/lib/errors";
import { getLog } from "@/lib/server/db";

export const dynamic = "force-dynamic";

/** Sign in with `{ user, password }`; sets the session cookie. */
export async function POST(req: Request) {
  try {
    return await login(req);
  } catch (err) {
    return toResponse(err, (e) => getLog().error({ event: "auth:login:error", err: e }));
  }
}
