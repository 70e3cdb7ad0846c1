import { createPerson, listPeople } from "@/lib/auth/people";
import { parseBody, personInputSchema } from "@/lib/auth/person-input";
import { getDb } from "@/lib/server/db";
import { adminMutation, adminRoute, readJson } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** Every person (never a password hash), by name. Admins only. */
export const GET = adminRoute(async () => Response.json({ people: await listPeople(getDb()) }));

/** Add a person `{ name, displayName?, role, password }`. Admins only. */
export const POST = adminMutation(async (req, _ctx, actor) => {
  const input = parseBody(personInputSchema, await readJson(req, 4096));
  return Response.json({ person: await createPerson(getDb(), actor, input) }, { status: 201 });
});
