import type { Backfill } from "./index";

/**
 * Runs an operator cancelled or discarded before `skip_reason` had the values `cancelled` and
 * `discarded` were skipped with no reason; their audit entry (`run.cancel`, `run.discard`) says
 * which. The latest such entry of each run gives it its reason. Idempotent: it touches only
 * skipped runs with no reason, which nothing else leaves.
 */
export const operatorSkipReasons: Backfill = {
  name: "operator_skip_reasons",
  after: "0029_operator_skip_reasons",
  sql: `
    UPDATE runs r
    SET skip_reason = CASE a.action WHEN 'run.cancel' THEN 'cancelled' ELSE 'discarded' END::skip_reason
    FROM (
      SELECT DISTINCT ON (target_id) target_id, action
      FROM audit_log
      WHERE target_type = 'run' AND action IN ('run.cancel', 'run.discard')
      ORDER BY target_id, at DESC, id DESC
    ) a
    WHERE r.id = a.target_id::bigint AND r.state = 'skipped' AND r.skip_reason IS NULL`,
};
