// Heartbeats must be HOT updates (they touch only run_queue.lease_expires_at, which no index
// covers): check it over a few renewal rounds, from where each renewal left its row.
// Measured while the bench's workers are running (their ticks, polls and passes share the table's
// pages and the server): the runs belong to a handler no worker serves, so only this process
// claims and renews them.
import type pg from "pg";
import type { Db } from "../../lib/db/client";
import { claimRunsDetailed } from "../../lib/runs/claim";
import { finishRuns } from "../../lib/runs/finish";
import { heartbeatRuns } from "../../lib/runs/lease";

export type HotReport = { runs: number; heartbeats: number; updates: number; hotUpdates: number; hotRatio: number; workersRunning: boolean };

/** A handler no worker registers: workers leave these runs alone (lib/runs/claim/served.ts). */
const HOT_HANDLER = "bench-hot";

/** Claim `n` fresh runs as a bench worker, renew their leases `rounds` times, and count HOT updates (pool and db: one connection). */
export async function measureHeartbeatHot(pool: pg.Pool, db: Db, n = 1000, rounds = 3, workersRunning = false): Promise<HotReport> {
  const { rows: made } = await pool.query<{ id: number }>(
    `INSERT INTO schedules (id, name, handler, cron, timezone, catch_up, next_slot_at, partition)
     OVERRIDING SYSTEM VALUE
     SELECT n.id, 'bench-hot-' || g, $2, '0 0 1 1 *', 'UTC', 'latest', sk_now() + interval '300 days', sk_partition_of(n.id, (SELECT greatest(1, count(*))::int FROM partition_leases))
     -- The product's partition rule on the id, taken from the identity sequence first (once per row).
     FROM (SELECT g, nextval(pg_get_serial_sequence('schedules', 'id')) AS id FROM generate_series(1, $1::int) g) n RETURNING id`,
    [n, HOT_HANDLER],
  );
  await pool.query(
    `INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, origin, max_attempts)
     SELECT id, partition, sk_now() - interval '2 days', sk_now(), sk_now(), 'pending', 'backfill', 6
     FROM schedules WHERE id = ANY($1::bigint[])`,
    [made.map((r) => r.id)],
  );
  const { claimed } = await claimRunsDetailed(db, { workerId: "bench-hot", partitions: null, limit: n, handlers: [HOT_HANDLER] });
  const held = claimed.map((r) => ({ id: r.id, scheduleId: r.scheduleId, attempt: r.attempt, queueTid: r.queueTid }));
  // Each renewal is its own statements and transactions, as in a worker (lib/runs/lease.ts waves),
  // so the page's dead versions can be pruned. HOT is read from where each row's new version went:
  // a renewal changes only an unindexed column, and for such an update PostgreSQL writes a HOT
  // version exactly when the new version fits on the same page, so "same page" is "HOT" for it. A
  // per-row fact, unlike the table's counters (pg_stat_user_tables), which the running workers'
  // own claims and finishes move too.
  const page = (tid: string | null | undefined) => (tid ? tid.slice(1, tid.indexOf(",")) : null);
  const stats = { upd: 0, hot: 0 };
  for (let i = 0; i < rounds; i++) {
    // As the worker does: the next renewal starts from where this one left each row.
    const renewed = await heartbeatRuns(db, "bench-hot", held);
    for (const h of held) {
      const now = renewed.get(h.id);
      if (now === undefined) continue;
      stats.upd++;
      if (page(now) === page(h.queueTid)) stats.hot++;
      h.queueTid = now;
    }
  }
  await finishRuns(db, "bench-hot", claimed.map((r) => ({ id: r.id, scheduleId: r.scheduleId, queueTid: r.queueTid, attempt: r.attempt, outcome: "succeeded" as const, durationMs: 0 })));
  const updates = Number(stats.upd);
  const hot = Number(stats.hot);
  return { runs: held.length, heartbeats: held.length * rounds, updates, hotUpdates: hot, hotRatio: Math.round((hot / Math.max(1, updates)) * 1000) / 1000, workersRunning };
}
