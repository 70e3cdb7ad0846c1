/**
 * The fleet's counts by status, handler and rule, as the alert pass last judged each schedule: a
 * few rows kept exact by a trigger on alert_watch (lib/db/sql/functions/alert_watch_counts.sql),
 * read here for the Overview and GET /api/metrics. Their cost is the number of statuses × handlers,
 * never the number of schedules; their freshness is the last pass's (`asOf`, every worker's alert
 * loop: SLOTKEEPER_ALERT_INTERVAL_SECONDS).
 *
 * The status is deriveStatus's (lib/health/schedule-health.ts) at the pass that last evaluated the
 * schedule; every change that can move it makes the schedule due for the next pass
 * (lib/alerts/watch.ts). A schedule made since the last pass has not been judged: it is counted in
 * `notEvaluated`, not under a status. One deleted since the last pass still counts, until then.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { ALERT_RULES, type AlertRule } from "../alerts/rules";
import type { HealthStatus } from "./schedule-health";

export type StatusCounts = {
  /** Evaluated schedules by status and handler, only the pairs with at least one, by status then handler. */
  byStatusHandler: { status: HealthStatus; handler: string; count: number }[];
  /** Evaluated schedules for which each rule held, every rule present. */
  rulesHolding: Record<AlertRule, number>;
  /** Live schedules not evaluated yet (made since the last pass). */
  notEvaluated: number;
  /** The database clock reading the last finished pass started from; null before the first pass. */
  asOf: Date | null;
};

/** Read the counts the alert pass keeps: a handful of rows, and the schedules made since it last ran. */
export async function readStatusCounts(db: Pick<Db, "execute">): Promise<StatusCounts> {
  const r = await db.execute<{
    by_status: { status: HealthStatus; handler: string; n: number }[] | null;
    rules: Record<string, number> | null;
    not_evaluated: number;
    as_of: Date | string | null;
  }>(sql`
    SELECT
      (SELECT json_agg(json_build_object('status', status, 'handler', handler, 'n', n) ORDER BY status, handler) FROM schedule_counts WHERE n > 0) AS by_status,
      (SELECT json_object_agg(rule, n) FROM rule_counts) AS rules,
      -- Through alert_watch_unevaluated_idx: as many rows as schedules made since the last pass.
      (SELECT count(*) FROM alert_watch w JOIN schedules s ON s.id = w.schedule_id WHERE w.status IS NULL AND s.deleted_at IS NULL)::int AS not_evaluated,
      (SELECT started_at FROM alert_pass WHERE id = 1) AS as_of`);
  const row = r.rows[0];
  return {
    byStatusHandler: (row.by_status ?? []).map((e) => ({ status: e.status, handler: e.handler, count: Number(e.n) })),
    rulesHolding: Object.fromEntries(ALERT_RULES.map((rule) => [rule, Number(row.rules?.[rule] ?? 0)])) as Record<AlertRule, number>,
    notEvaluated: Number(row.not_evaluated),
    asOf: row.as_of === null ? null : new Date(row.as_of),
  };
}
