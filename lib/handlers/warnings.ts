import type { HandlerInfo } from "../workers/registry";
import { NOT_IDEMPOTENT_WARNING } from "./types";

/** A handler as the API lists it: non-idempotent ones carry the "this job may run twice" warning. */
export type HandlerListing = HandlerInfo & { warning?: string };

/** Add the warning to every handler that does not declare itself idempotent. */
export function withWarnings(handlers: HandlerInfo[]): HandlerListing[] {
  return handlers.map((h) => (h.idempotent ? { ...h } : { ...h, warning: NOT_IDEMPOTENT_WARNING }));
}
