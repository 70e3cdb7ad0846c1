import { updatePerson } from "@/lib/auth/people";
import { parseBody, personPatchSchema } from "@/lib/auth/person-input";
import { getDb } from "@/lib/server/db";
import { adminMutation, readJson, type RouteContext } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** Change a person's `{ role?, displayName?, password?, disabled? }`; a reset or a disable ends their sessions. Admins only. */
export const PATCH = adminMutation(async (req, ctx: RouteContext<{ name: string }>, actor) => {
  const { name } = await ctx.params;
  const patch = parseBody(personPatchSchema, await readJson(req, 4096));
  return Response.json({ person: await updatePerson(getDb(), actor, name, patch) });
});
