import { changeOwnPassword, ownPersonId } from "@/lib/auth/people";
import { openSession } from "@/lib/auth/login";
import { parseBody, passwordChangeSchema } from "@/lib/auth/person-input";
import { getAccessSettings } from "@/lib/auth/settings";
import { getDb } from "@/lib/server/db";
import { readJson, selfMutation } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/**
 * Change one's own password `{ currentPassword, newPassword }` (a person signed in with their own
 * account). Every session of theirs ends, this one too; the answer opens a fresh one here.
 */
export const POST = selfMutation(async (req, _ctx, actor) => {
  const personId = ownPersonId(actor);
  const change = parseBody(passwordChangeSchema, await readJson(req, 4096));
  await changeOwnPassword(getDb(), actor, change);
  const cookie = await openSession(req, getAccessSettings(), { account: actor.name, role: actor.role, personId });
  return new Response(null, { status: 204, headers: { "set-cookie": cookie } });
});
