import type { CommandsPolicy } from "../../lib/config";
import type { Db } from "../../lib/db/client";
import { NonRetryableError, type Handler } from "../../lib/handlers/types";
import type { HandlerInfo } from "../../lib/workers/registry";
import { commandHandler } from "./command";
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

/**
 * The built-in handlers (noop, sleep, http, sql-ledger, fail); sql-ledger writes through `db`.
 * `command` is among them only when the worker was allowed to run programs (SLOTKEEPER_COMMANDS).
 */
export function builtinHandlers(db: Db, opts: { commands?: CommandsPolicy } = {}): Handler[] {
  const handlers = [noopHandler, sleepHandler, httpHandler, sqlLedgerHandler(db), failHandler] as Handler[];
  if (opts.commands) handlers.push(commandHandler(opts.commands) as Handler);
  return handlers;
}

/** A registry of the given handlers; a later handler with a built-in's name replaces it. */
export function createHandlerRegistry(handlers: Handler[]): HandlerRegistry {
  const byName = new Map<string, Handler>();
  for (const h of handlers) byName.set(h.name, h);
  return {
    get: (name) => {
      const h = byName.get(name);
      if (!h && name === "command") {
        throw new NonRetryableError(`handler "command" is not served by this worker: it runs programs only when started with SLOTKEEPER_COMMANDS (all, or a list of executables)`);
      }
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
