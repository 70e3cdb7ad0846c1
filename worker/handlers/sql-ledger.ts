import { sql } from "drizzle-orm";
import type { Db } from "../../lib/db/client";
import { BUILTIN_HANDLERS } from "../../lib/handlers/known";
import { defineHandler } from "../../lib/handlers/types";
import { waitFor } from "../../lib/handlers/wait";

const info = BUILTIN_HANDLERS.find((h) => h.name === "sql-ledger")!;

/**
 * sql-ledger payload. `delayMs` is simulated work before the write; with `interruptible: false`
 * the work ignores the abort signal, like a slow call that cannot be cancelled — how a paused
 * (zombie) worker ends up writing after its lease was taken over, which the fence then rejects.
 */
export type LedgerPayload = { delayMs?: number; interruptible?: boolean; holdConnections?: number; holdMs?: number };

/** At most this many connections held at once by `holdConnections`. */
export const LEDGER_MAX_HELD_CONNECTIONS = 64;

/**
 * A fenced write, runnable: one ledger row per slot, keyed by the idempotency key, written
 * only while the attempt still holds the run. The fence is the live queue row, read and share-locked
 * in the same statement: running, this attempt's token, this worker, and a lease that has not expired by the
 * database clock. So a superseded attempt's write is refused in either order: after its
 * successor's (the token moved on) and before it (the lease ran out while the worker was frozen,
 * and nobody has claimed the run yet). A repeat with a higher token overwrites (and counts the
 * write); a lower token changes nothing.
 */
export function sqlLedgerHandler(db: Db) {
  return defineHandler<LedgerPayload>({
    ...info,
    run: async (ctx) => {
      const delayMs = Number(ctx.payload?.delayMs ?? 0);
      if (delayMs > 0) {
        ctx.log.info({ event: "ledger:work:start", delayMs });
        await waitFor(delayMs, ctx.payload?.interruptible === false ? undefined : ctx.signal);
      }
      // A handler that hogs the database: `holdConnections` statements of `holdMs` each, at once, on
      // the handlers' pool (the fault suite's pool exhaustion; more than the pool has, and they queue).
      const hold = Math.min(LEDGER_MAX_HELD_CONNECTIONS, Math.max(0, Math.floor(Number(ctx.payload?.holdConnections ?? 0))));
      const holdSeconds = Math.max(0, Number(ctx.payload?.holdMs ?? 0)) / 1000;
      if (hold > 0 && holdSeconds > 0) await Promise.all(Array.from({ length: hold }, () => db.execute(sql`SELECT pg_sleep(${holdSeconds})`)));
      const r = await db.execute<{ writes: number }>(sql`
        INSERT INTO ledger (idempotency_key, schedule_id, scheduled_for, fencing_token, worker_id, created_at)
        SELECT ${ctx.idempotencyKey}, ${ctx.schedule.id}, ${ctx.slot.toISOString()}::timestamptz, ${ctx.fencingToken}, ${ctx.workerId}, sk_now()
        WHERE EXISTS (
          SELECT 1 FROM run_queue q
          -- By schedule (run_queue_running_idx) and run id, not by slot: a manual run's slot has
          -- microseconds, and the handler's slot is in whole milliseconds.
          WHERE q.state = 'running' AND q.schedule_id = ${ctx.schedule.id}
            AND q.run_id = ${ctx.runId} AND q.attempts = ${ctx.fencingToken} AND q.lease_owner = ${ctx.workerId} AND q.lease_expires_at > sk_now()
          -- The row lock orders the fence against every change of the run: a takeover, or this
          -- worker giving the attempt up at its local deadline while the handler still writes, waits
          -- until this write commits, or has committed and the fence re-reads the changed row and
          -- refuses. Without it the check read a snapshot, and the write could commit after the
          -- run had already left this attempt.
          FOR SHARE)
        ON CONFLICT (idempotency_key) DO UPDATE
          SET fencing_token = excluded.fencing_token, worker_id = excluded.worker_id, writes = ledger.writes + 1
          -- Fencing: a write carrying a lower (older) token than the stored one is rejected.
          WHERE ledger.fencing_token < excluded.fencing_token
        RETURNING writes`);
      if (r.rows.length === 0) {
        ctx.log.warn({ event: "ledger:write:rejected", idempotencyKey: ctx.idempotencyKey, fencingToken: ctx.fencingToken, aborted: ctx.signal.aborted });
        // Retryable: the run is not finished, only this attempt lost it. A lease that ran out (a
        // freeze, a clock step, a silent network) leaves the run to a retry or a takeover, which
        // writes with its own token; failing it for good would make a lost lease a dead run.
        throw new Error(`ledger: attempt ${ctx.fencingToken} no longer holds ${ctx.idempotencyKey} (superseded or its lease expired); the write was refused`);
      }
      ctx.log.info({ event: "ledger:write:applied", idempotencyKey: ctx.idempotencyKey, fencingToken: ctx.fencingToken, writes: r.rows[0].writes });
      return { writes: r.rows[0].writes };
    },
  });
}
