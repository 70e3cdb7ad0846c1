import "server-only";
import { AppError, toResponse } from "../errors";
import type { Actor } from "../audit/record";
import { getLog } from "./db";

/** Route params as Next 16 passes them (a promise). */
export type RouteContext<P = Record<string, string>> = { params: Promise<P> };

type Handler<P> = (req: Request, ctx: RouteContext<P>, actor: Actor) => Promise<Response>;

/**
 * Who is calling. Access control (issue 6) replaces this: loopback-only by default, sessions and
 * API tokens when configured. Until then every caller is the local operator.
 */
export async function resolveActor(_req: Request): Promise<Actor> {
  return { name: "local", kind: "local", role: "operator" };
}

function wrap<P>(needs: "viewer" | "operator", fn: Handler<P>) {
  return async (req: Request, ctx: RouteContext<P>): Promise<Response> => {
    try {
      const actor = await resolveActor(req);
      if (needs === "operator" && actor.role !== "operator") throw new AppError("forbidden", "this action needs the operator role");
      return await fn(req, ctx, actor);
    } catch (err) {
      return toResponse(err, (e) => getLog().error({ event: "api:error", err: e }));
    }
  };
}

/** A read-only route: any authenticated caller (viewer or operator). */
export function route<P = Record<string, string>>(fn: Handler<P>) {
  return wrap("viewer", fn);
}

/** A state-changing route: operators only; the handler gets the actor to record in the audit log. */
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
  try {
    return JSON.parse(text);
  } catch {
    throw new AppError("invalid", "the request body is not valid JSON", "body");
  }
}
