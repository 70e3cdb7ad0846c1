import "server-only";
import { AppError, toResponse } from "../errors";
import type { Actor } from "../audit/record";
import { resolveAccess, type Access } from "../auth/access";
import { getAccessSettings } from "../auth/settings";
import { scopeCovers, scopeOfRole, scopeRefusal, type Scope } from "../auth/scopes";
import { findTokenActor } from "../auth/tokens";
import { findSessionActor } from "../auth/sessions";
import { checkMutationRequest } from "../security/csrf";
import { isNulRejection } from "../db/sql-errors";
import { getDb, getLog } from "./db";
import { markWrite, readFromReplica } from "./replica";

/** Route params as Next 16 passes them (a promise). */
export type RouteContext<P = Record<string, string>> = { params: Promise<P> };

type Handler<P> = (req: Request, ctx: RouteContext<P>, actor: Actor) => Promise<Response>;

/** How the caller of this request authenticated (lib/auth/access.ts), with the database bound in. */
export async function resolveRequestAccess(req: Request): Promise<Access> {
  const settings = getAccessSettings();
  return resolveAccess(
    req,
    settings,
    (token) => findTokenActor(getDb(), token),
    (id) => findSessionActor(getDb(), id, { operator: settings.operatorPassword, viewer: settings.viewerPassword }),
  );
}

/**
 * Who is calling: a bearer token, a signed-in user (credentials mode) or the local operator
 * (loopback-only mode). Throws AppError unauthorized (401) or forbidden (403) otherwise.
 */
export async function resolveActor(req: Request): Promise<Actor> {
  return (await resolveRequestAccess(req)).actor;
}

/** What a route needs beyond its scope. */
export type RouteOptions = {
  /**
   * The route applies a tag-restricted token's restriction itself (lib/server/tag-scope.ts), or
   * shows nothing about schedules; other routes refuse such a token, as they would show or change
   * schedules it may not see.
   */
  tagAware?: boolean;
  /**
   * "replica": the handler only reads, and what it reads may lag: getReadDb() is the standby
   * (DATABASE_READ_URL) while it answers (lib/server/replica.ts). Never for a route that writes, or
   * must see a write it or its caller just made.
   */
  reads?: "replica";
};

function wrap<P>(needs: Scope, mutating: boolean, fn: Handler<P>, opts: RouteOptions = {}) {
  return async (req: Request, ctx: RouteContext<P>): Promise<Response> => {
    try {
      const access = await resolveRequestAccess(req);
      // Cross-site checks come before the scope check: a forged request learns nothing about roles.
      if (mutating) checkMutationRequest(req, access.credential, getAccessSettings());
      if (!scopeCovers(scopeOfRole(access.actor.role), needs)) throw new AppError("forbidden", scopeRefusal(needs));
      if (access.actor.scheduleTags && !opts.tagAware) {
        throw new AppError("forbidden", `this token is restricted to schedules tagged ${access.actor.scheduleTags.join(", ")}, and ${new URL(req.url).pathname} is not about those schedules alone`);
      }
      const run = () => fn(req, ctx, access.actor);
      if (mutating) return withNoStore(await markWrite(await run()));
      return withNoStore(await (opts.reads === "replica" ? readFromReplica(req, run) : run()));
    } catch (err) {
      // A NUL that came some other way than a JSON body (a path or query parameter) is still the caller's input.
      if (isNulRejection(err)) err = new AppError("invalid", "the request holds a NUL character (\\u0000), which PostgreSQL cannot store or compare", "request");
      return withNoStore(toResponse(err, (e) => getLog().error({ event: "api:error", err: e })));
    }
  };
}

/** API answers depend on who asks: never let a shared cache keep one. */
function withNoStore(res: Response): Response {
  try {
    if (!res.headers.has("cache-control")) res.headers.set("cache-control", "no-store");
  } catch {
    // Immutable headers (a Response.redirect, say): leave them as they are.
  }
  return res;
}

/** A read-only route: any authenticated caller (the `read` scope). */
export function route<P = Record<string, string>>(fn: Handler<P>, opts?: RouteOptions) {
  return wrap("read", false, fn, opts);
}

/** A state-changing route: the `operate` scope, same-origin (or a bearer token), JSON or no body; the handler gets the actor to record in the audit log. */
export function mutation<P = Record<string, string>>(fn: Handler<P>, opts?: RouteOptions) {
  return wrap("operate", true, fn, opts);
}

/**
 * A state-changing route any signed-in caller may use on their own account (the `read` scope):
 * changing one's own password. Same cross-site rules as every mutation.
 */
export function selfMutation<P = Record<string, string>>(fn: Handler<P>) {
  return wrap("read", true, fn);
}

/** A read-only route for admins only (the `admin` scope), e.g. the list of API tokens. */
export function adminRoute<P = Record<string, string>>(fn: Handler<P>) {
  return wrap("admin", false, fn);
}

/** A state-changing route for admins only (the `admin` scope): minting and revoking API tokens. */
export function adminMutation<P = Record<string, string>>(fn: Handler<P>) {
  return wrap("admin", true, fn);
}

/** The largest body any route reads unless it says otherwise. */
export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * Read a request body as text, refusing it with 413 as soon as it is known to be larger than
 * `maxBytes`: at once when Content-Length says so, otherwise while reading, counting bytes as
 * they arrive, so at most one network chunk past the limit is ever held. Every route reads its
 * body here (through readJson). Next.js hands route handlers the socket's stream as it arrives
 * (proxy.ts does not run for /api, so Next does not buffer the body for it first).
 */
export async function readBodyText(req: Request, maxBytes = DEFAULT_BODY_LIMIT_BYTES): Promise<string> {
  const tooLarge = () => new AppError("too_large", `the request body is larger than ${maxBytes} bytes`, "body");
  const declared = req.headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared.trim()) && Number(declared) > maxBytes) throw tooLarge();
  if (!req.body) return "";
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      // Stop reading and answer; releasing (not cancelling) keeps the socket open for the 413.
      reader.releaseLock();
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Parse a JSON request body, refusing non-JSON content types, bodies over `maxBytes` (413) and malformed JSON with a 4xx. */
export async function readJson(req: Request, maxBytes = DEFAULT_BODY_LIMIT_BYTES): Promise<unknown> {
  const type = req.headers.get("content-type") ?? "";
  if (!type.toLowerCase().startsWith("application/json")) throw new AppError("invalid", "the request body must be JSON (content-type: application/json)", "body");
  const text = await readBodyText(req, maxBytes);
  if (!text.trim()) return {};
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new AppError("invalid", "the request body is not valid JSON", "body");
  }
  // PostgreSQL stores no NUL character in text or jsonb (it refuses the whole statement), so a
  // "\u0000" anywhere would otherwise surface as a 500 after validation passed. JSON can only carry
  // one escaped, so the walk runs only when the text holds that escape.
  if (text.includes("\\u0000")) {
    const at = pathOfNul(body);
    if (at !== null) throw new AppError("invalid", `${at || "body"} must not contain the NUL character (\\u0000)`, at || "body");
  }
  return body;
}

/** The dotted path of the first string or key holding a NUL character, or null. Iterative: bodies nest deep. */
function pathOfNul(body: unknown): string | null {
  type Node = { value: unknown; key: string | null; parent: Node | null };
  const pathOf = (n: Node | null, last?: string): string => {
    const keys: string[] = last === undefined ? [] : [last];
    for (let at = n; at && at.key !== null; at = at.parent) keys.push(at.key);
    return keys.reverse().join(".");
  };
  const stack: Node[] = [{ value: body, key: null, parent: null }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const { value } = node;
    if (typeof value === "string") {
      if (value.includes("\u0000")) return pathOf(node);
    } else if (typeof value === "object" && value !== null) {
      const entries: [string, unknown][] = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value);
      for (const [key, child] of entries) {
        if (key.includes("\u0000")) return pathOf(node, key);
        stack.push({ value: child, key, parent: node });
      }
    }
  }
  return null;
}
