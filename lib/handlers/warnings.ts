import type { Db } from "../db/client";
import { z } from "zod";
import { handlerInfoSchema, type HandlerInfo } from "../workers/registry";
import { listKnownHandlers } from "./known";
import { NOT_IDEMPOTENT_WARNING } from "./types";

/** A handler as the API lists it: non-idempotent ones carry the "this job may run twice" warning. */
export const handlerListingSchema = handlerInfoSchema.extend({ warning: z.string().optional() }).strict();
/** A handler as GET /api/handlers lists it: with its fleet-wide limit (lib/handlers/limits.ts; null: none). */
export const limitedHandlerListingSchema = handlerListingSchema.extend({ maxConcurrent: z.number().int().nullable() }).strict();
export type HandlerListing = z.infer<typeof handlerListingSchema>;

/** Add the warning to every handler that does not declare itself idempotent. */
export function withWarnings(handlers: HandlerInfo[]): HandlerListing[] {
  return handlers.map((h) => (h.idempotent ? { ...h } : { ...h, warning: NOT_IDEMPOTENT_WARNING }));
}

/**
 * A schedule may name a handler no worker has registered yet (its workers may not be deployed):
 * it is saved, and this warning says so, naming the handlers that are registered. Its runs wait
 * pending, no attempt used, until a worker serving the handler starts (routing).
 */
export async function unregisteredHandlerWarning(db: Db, handler: string): Promise<string | null> {
  const known = await listKnownHandlers(db);
  if (known.some((h) => h.name === handler)) return null;
  return `no worker has registered handler "${handler}" (registered: ${known.map((h) => h.name).join(", ")}); the schedule is saved and its runs wait pending until a worker serving it starts`;
}
