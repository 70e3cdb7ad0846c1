import { buildOpenApiDocument } from "@/lib/api/openapi";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** GET /api/openapi.json — the OpenAPI 3.1 document of this API, built from the zod schemas the routes validate and answer with. */
export const GET = route(async () => Response.json(buildOpenApiDocument()), { tagAware: true });
