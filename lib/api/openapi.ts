/**
 * The OpenAPI 3.1 document of the JSON API (GET /api/openapi.json), built from the route table
 * (lib/api/routes.ts) with zod's own JSON Schema output (`z.toJSONSchema`, JSON Schema 2020-12,
 * which is OpenAPI 3.1's dialect): bodies as the routes read them (`io: "input"`: defaults make a
 * field optional), answers as they are written (`io: "output"`). Answer objects are closed
 * (`additionalProperties: false`), so an undocumented field in an answer fails
 * app/api/openapi.test.ts.
 */
import { z } from "zod";
import { errorBodySchema } from "../errors";
import { version } from "../../package.json";
import { API_ROUTES, type RouteAccess, type RouteOperation } from "./routes";

type Json = Record<string, unknown>;

/** What each error status means, for the document's shared responses. */
export const ERROR_STATUSES: Record<number, string> = {
  400: "bad input (`validation`); `field` names it",
  401: "not signed in, a wrong password, an unknown or revoked token (`unauthorized`)",
  403: "not allowed: a role or scope too small, a cross-site request, a non-loopback client in loopback-only mode (`forbidden`)",
  404: "no such schedule, run, channel, person or token (`not_found`)",
  409: "a taken name, a stale version, a run in the wrong state (`conflict`)",
  413: "the request body is over its limit (`too_large`)",
  429: "too many failed sign-ins (`rate_limited`); `retry-after` says when to try again",
  503: "a dependency the route needs is unavailable (`unavailable`): for sign-in, the failed sign-in counts",
  500: "anything else (`internal`); details only in the server log",
};

const ACCESS_NOTE: Record<RouteAccess, string> = {
  open: "Open to everyone.",
  read: "Needs the viewer role (a token's `read` scope).",
  operate: "Needs the operator role (a token's `operate` scope); same-origin or a bearer token.",
  admin: "Needs the admin role (a token's `admin` scope).",
  self: "Any signed-in person, on their own account; same-origin or a bearer token.",
};

const jsonSchema = (schema: z.ZodType, io: "input" | "output"): Json => {
  const out = z.toJSONSchema(schema, { io, target: "draft-2020-12", unrepresentable: "any" }) as Json;
  delete out.$schema;
  return out;
};

/** The error statuses an operation can answer with: those of its guard, its input and its own. */
function errorStatuses(op: RouteOperation, hasParams: boolean): number[] {
  const s = new Set<number>(op.errors ?? []);
  if (op.access !== "open") {
    // Every guarded route: who is asking, and a NUL or malformed value anywhere in the request.
    for (const code of [400, 401, 403, 500]) s.add(code);
    if (op.body) s.add(413);
    if (hasParams) s.add(404);
  } else s.add(500);
  return [...s].sort((a, b) => a - b);
}

function parameters(params: Record<string, z.ZodType> | undefined, query: z.ZodObject | undefined): Json[] {
  const out: Json[] = [];
  for (const [name, schema] of Object.entries(params ?? {})) out.push({ name, in: "path", required: true, schema: jsonSchema(schema, "input") });
  if (query) {
    const whole = jsonSchema(query, "input") as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, schema] of Object.entries(whole.properties ?? {})) {
      out.push({ name, in: "query", required: (whole.required ?? []).includes(name), schema });
    }
  }
  return out;
}

function operation(op: RouteOperation, hasParams: boolean, params: Json[]): Json {
  const responses: Json = {};
  for (const [status, a] of Object.entries(op.answers)) {
    responses[status] = a.schema
      ? { description: a.description, content: { "application/json": { schema: jsonSchema(a.schema, "output") } } }
      : a.contentType
        ? { description: a.description, content: { [a.contentType]: { schema: a.contentType.startsWith("application/json") ? { type: "object" } : { type: "string" } } } }
        : { description: a.description };
  }
  for (const status of errorStatuses(op, hasParams)) responses[status] = { $ref: `#/components/responses/Error${status}` };
  return {
    summary: op.summary,
    description: ACCESS_NOTE[op.access],
    ...(params.length ? { parameters: params } : {}),
    ...(op.body ? { requestBody: { required: !op.bodyOptional, content: { "application/json": { schema: jsonSchema(op.body, "input") } } } } : {}),
    responses,
    ...(op.access === "open" ? { security: [] } : {}),
  };
}

/** The whole document; pure and cheap enough to build per request. */
export function buildOpenApiDocument(): Json {
  const paths: Json = {};
  for (const r of API_ROUTES) {
    const params = parameters(r.params, undefined);
    const item: Json = {};
    for (const [method, op] of Object.entries(r.operations)) item[method] = operation(op, r.params !== undefined, [...params, ...parameters(undefined, op.query)]);
    paths[r.path] = item;
  }
  const responses: Json = {};
  for (const [status, description] of Object.entries(ERROR_STATUSES)) {
    responses[`Error${status}`] = { description, content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Slotkeeper API",
      version,
      description: "The JSON API of the Slotkeeper console (docs/api.md). Every error has one shape, `Error`; a request that fails changes nothing.",
    },
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    paths,
    components: {
      schemas: { Error: jsonSchema(errorBodySchema, "output") },
      responses,
      securitySchemes: {
        bearerToken: { type: "http", scheme: "bearer", description: "an API token, `skt_…`" },
        session: { type: "apiKey", in: "cookie", name: "sk_session", description: "the console's session cookie (`__Host-sk_session` over HTTPS), from POST /api/auth/login" },
      },
    },
    security: [{ bearerToken: [] }, { session: [] }, {}],
  };
}
