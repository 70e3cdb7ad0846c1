import type { Db } from "../../lib/db/client";
import { NonRetryableError, type Handler } from "../../lib/handlers/types";
import type { HandlerInfo } from "../../lib/workers/registry";
import { failHandler } from "./fail";
import { httpHandler } from "./http";
import { noopHandler } from "./noop";
import { sleepHandler } from "./sleep";
import { sqlLedgerHandler } from "./sql-ledger";

/** The handlers one worker can run, by name. */
export type HandlerRegistry = {
  /** The handler of that name; throws NonRetryableError naming the known ones when there is none. */
  get: (name: string) => Handler;
  /** What the worker registers in workers.handlers. */
  list: () => HandlerInfo[];
};

/** The built-in handlers (noop, sleep, http, sql-ledger, fail); sql-ledger writes through `db`. */
export function builtinHandlers(db: Db): Handler[] {
  return [noopHandler, sleepHandler, httpHandler, sqlLedgerHandler(db), failHandler] as Handler[];
}

/** A registry of the given handlers; a later handler with a built-in's name replaces it. */
export function createHandlerRegistry(handlers: Handler[]): HandlerRegistry {
  const byName = new Map<string, Handler>();
  for (const h of handlers) byName.set(h.name, h);
  return {
    get: (name) => {
      const h = byName.get(name);
      if (!h) {
        throw new NonRetryableError(
          `unknown handler "${name}": this worker has no handler of that name (it has: ${[...byName.keys()].sort().join(", ")})`,
        );
      }
      return h;
    },
    list: () => [...byName.values()].map((h) => ({ name: h.name, idempotent: h.idempotent, description: h.description })),
  };
}
