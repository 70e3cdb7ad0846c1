import "server-only";
import { AppError, toResponse } from "../errors";
import type { Actor } from "../audit/record";
import { resolveAccess, type Access } from "../auth/access";
import { getAccessSettings } from "../auth/settings";
import { findTokenActor } from "../auth/tokens";
import { checkMutationRequest } from "../security/csrf";
import { isNulRejection } from "../db/sql-errors";
import { getDb, getLog } from "./db";

/** Route params as Next 16 passes them (a promise). */
export type RouteContext<P = Record<string, string>> = { params: Promise<P> };

type Handler<P> = (req: Request, ctx: RouteContext<P>, actor: Actor) => Promise<Response>;

/** How the caller of this request authenticated (lib/auth/access.ts), with the database bound in. */
export async function resolveRequestAccess(req: Request): Promise<Access> {
  return resolveAccess(req, getAccessSettings(), (token) => findTokenActor(getDb(), token));
}

/**
 * Who is calling: a bearer token, a signed-in user (credentials mode) or the local operator
 * (loopback-only mode). Throws AppError unauthorized (401) or forbidden (403) otherwise.
 */
export async function resolveActor(req: Request): Promise<Actor> {
  return (await resolveRequestAccess(req)).actor;
}

function wrap<P>(needs: "viewer" | "operator", fn: Handler<P>) {
  return async (req: Request, ctx: RouteContext<P>): Promise<Response> => {
    try {
      const access = await resolveRequestAccess(req);
      if (needs === "operator") {
        // Cross-site checks come before the role check: a forged request learns nothing about roles.
        checkMutationRequest(req, access.credential, getAccessSettings());
        if (access.actor.role !== "operator") throw new AppError("forbidden", "this action needs the operator role");
      }
      return withNoStore(await fn(req, ctx, access.actor));
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

/** A read-only route: any authenticated caller (viewer or operator). */
export function route<P = Record<string, string>>(fn: Handler<P>) {
  return wrap("viewer", fn);
}

/** A state-changing route: operators only, same-origin (or a bearer token), JSON or no body; the handler gets the actor to record in the audit log. */
export function mutation<P = Record<string, string>>(fn: Handler<P>) {
  return wrap("operator", fn);
}

/** Parse a JSON request body, refusing non-JSON content types and malformed JSON with a 4xx. */
export async function readJson(req: Request, maxBytes = 1024 * 1024): Promise<unknown> {
  const type = req.headers.get("content-type") ?? "";
  if (!type.toLowerCase().startsWith("application/json")) throw new AppError("invalid", "the request body must be JSON (content-type: application/json)", "body");
  const text = await req.text();
  if (Buffer.byteLength(text) > maxBytes) throw new AppError("too_large", `the request body is larger than ${maxBytes} bytes`, "body");
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
