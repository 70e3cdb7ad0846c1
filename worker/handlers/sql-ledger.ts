import { sql } from "drizzle-orm";
import type { Db } from "../../lib/db/client";
import { BUILTIN_HANDLERS } from "../../lib/handlers/known";
import { defineHandler, NonRetryableError } from "../../lib/handlers/types";
import { waitFor } from "../../lib/handlers/wait";

const info = BUILTIN_HANDLERS.find((h) => h.name === "sql-ledger")!;

/**
 * sql-ledger payload. `delayMs` is simulated work before the write; with `interruptible: false`
 * the work ignores the abort signal, like a slow call that cannot be cancelled — how a paused
 * (zombie) worker ends up writing after its lease was taken over, which the fence then rejects.
 */
export type LedgerPayload = { delayMs?: number; interruptible?: boolean };

/**
 * The article's pattern, runnable: one ledger row per slot, keyed by the idempotency key. A repeat
 * with a higher fencing token overwrites (and counts the write); a lower token changes nothing.
 */
export function sqlLedgerHandler(db: Db) {
  return defineHandler<LedgerPayload>({
    ...info,
    run: async (ctx) => {
      const delayMs = Number(ctx.payload?.delayMs ?? 0);
      if (delayMs > 0) await waitFor(delayMs, ctx.payload?.interruptible === false ? undefined : ctx.signal);
      const r = await db.execute<{ writes: number }>(sql`
        INSERT INTO ledger (idempotency_key, schedule_id, scheduled_for, fencing_token, worker_id, created_at)
        VALUES (${ctx.idempotencyKey}, ${ctx.schedule.id}, ${ctx.slot.toISOString()}::timestamptz, ${ctx.fencingToken}, ${ctx.workerId}, sk_now())
        ON CONFLICT (idempotency_key) DO UPDATE
          SET fencing_token = excluded.fencing_token, worker_id = excluded.worker_id, writes = ledger.writes + 1
          -- Fencing: a write carrying a lower (older) token than the stored one is rejected.
          WHERE ledger.fencing_token < excluded.fencing_token
        RETURNING writes`);
      if (r.rows.length === 0) {
        ctx.log.warn({ event: "ledger:write:rejected", idempotencyKey: ctx.idempotencyKey, fencingToken: ctx.fencingToken, aborted: ctx.signal.aborted });
        throw new NonRetryableError(`ledger: a newer attempt already wrote ${ctx.idempotencyKey}; token ${ctx.fencingToken} rejected`);
      }
      ctx.log.info({ event: "ledger:write:applied", idempotencyKey: ctx.idempotencyKey, fencingToken: ctx.fencingToken, writes: r.rows[0].writes });
      return { writes: r.rows[0].writes };
    },
  });
}
