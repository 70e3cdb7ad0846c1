import type pg from "pg";
import { evaluateAlerts, type EvaluateOptions } from "../alerts/evaluate";
import { tupleReadsOf } from "./tuple-reads";

/** What the alert-pass tests give every pass. */
export const ALERT_PASS_OPTIONS: EvaluateOptions = { publicUrl: "http://console.test", reminderSeconds: 3600 };

export type PassReads = Record<"schedules" | "runs" | "run_queue" | "alert_watch" | "alert_watch_check_idx", number>;

/** Run one pass on its own connections and return the tuples it read from the fleet's tables. */
export async function measuredPass(url: string, pool: pg.Pool, opts = ALERT_PASS_OPTIONS): Promise<{ reads: PassReads; checked: number }> {
  const { result, reads } = await tupleReadsOf(url, pool, ["schedules", "runs", "run_queue", "alert_watch", "alert_watch_check_idx"], async (db) => {
    const r = await evaluateAlerts(db, opts);
    if (!r.evaluated) throw new Error("the measured alert pass did not evaluate (another pass held its lock)");
    return r.checked;
  });
  return { reads: reads as PassReads, checked: result };
}

/** `n` schedules named `prefix` + a number, every 300 s (late after 630 s), each with one success now, in bulk. */
export async function healthyInBulk(pool: pg.Pool, prefix: string, n: number): Promise<void> {
  await pool.query(
    `INSERT INTO schedules (name, handler, every_seconds, timezone, enabled, next_slot_at, partition, created_at, updated_at, catch_up)
     SELECT $1 || g, 'noop', 300, 'UTC', true, sk_now() + interval '300 s', 0, sk_now(), sk_now(), 'all'
     FROM generate_series(1, $2::int) g`,
    [prefix, n],
  );
  await pool.query(
    `INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, attempts, max_attempts, started_at, finished_at, duration_ms)
     SELECT s.id, 0, sk_now(), sk_now(), sk_now(), 'done', 1, 3, sk_now(), sk_now(), 100 FROM schedules s WHERE starts_with(s.name, $1)`,
    [prefix],
  );
}
