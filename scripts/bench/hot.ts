// Heartbeats must be HOT updates (they touch only run_queue.lease_expires_at, which no index
// covers): check it with pg_stat_user_tables (n_tup_upd / n_tup_hot_upd) around a few renewal rounds.
import type pg from "pg";
import type { Db } from "../../lib/db/client";
import { claimRunsDetailed } from "../../lib/runs/claim";
import { finishRuns } from "../../lib/runs/finish";
import { heartbeatRuns } from "../../lib/runs/lease";

export type HotReport = { runs: number; heartbeats: number; updates: number; hotUpdates: number; hotRatio: number };

/** Claim `n` fresh runs as a bench worker, renew their leases `rounds` times, and count HOT updates (pool and db: one connection). */
export async function measureHeartbeatHot(pool: pg.Pool, db: Db, n = 1000, rounds = 3): Promise<HotReport> {
  await pool.query(
    `INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, origin, max_attempts)
     SELECT id, partition, sk_now() - interval '2 days', sk_now(), sk_now(), 'pending', 'backfill', 6
     FROM schedules ORDER BY id LIMIT $1`,
    [n],
  );
  const { claimed } = await claimRunsDetailed(db, { workerId: "bench-hot", partitions: null, limit: n });
  const held = claimed.map((r) => ({ id: r.id, scheduleId: r.scheduleId, attempt: r.attempt, queueTid: r.queueTid }));
  // Each renewal is its own transaction, as in a worker, so the page's dead versions can be pruned.
  // Only this process writes now; the counters are read after forcing our own stats out.
  const read = async () => {
    await pool.query(`SELECT pg_stat_force_next_flush()`);
    await new Promise((r) => setTimeout(r, 1200));
    const { rows } = await pool.query<{ upd: string; hot: string }>(
      `SELECT pg_stat_clear_snapshot(), n_tup_upd AS upd, n_tup_hot_upd AS hot FROM pg_stat_user_tables WHERE relname = 'run_queue'`,
    );
    return { upd: Number(rows[0].upd), hot: Number(rows[0].hot) };
  };
  const before = await read();
  for (let i = 0; i < rounds; i++) {
    // As the worker does: the next renewal starts from where this one left each row.
    const renewed = await heartbeatRuns(db, "bench-hot", held);
    for (const h of held) h.queueTid = renewed.get(h.id) ?? h.queueTid;
  }
  const after = await read();
  const stats = { upd: after.upd - before.upd, hot: after.hot - before.hot };
  await finishRuns(db, "bench-hot", claimed.map((r) => ({ id: r.id, scheduleId: r.scheduleId, queueTid: r.queueTid, attempt: r.attempt, outcome: "succeeded" as const, durationMs: 0 })));
  const updates = Number(stats.upd);
  const hot = Number(stats.hot);
  return { runs: held.length, heartbeats: held.length * rounds, updates, hotUpdates: hot, hotRatio: Math.round((hot / Math.max(1, updates)) * 1000) / 1000 };
}
