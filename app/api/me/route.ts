import { scopeOfRole } from "@/lib/auth/scopes";
import { getAccessSettings } from "@/lib/auth/settings";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** Who the console is talking to, and how access is configured: drives what the console shows. */
export const GET = route(
  async (_req, _ctx, actor) =>
    Response.json({
      actor: { name: actor.name, kind: actor.kind, role: actor.role, scope: scopeOfRole(actor.role), scheduleTags: actor.scheduleTags ?? null },
      access: getAccessSettings().mode,
    }),
  { tagAware: true },
);
