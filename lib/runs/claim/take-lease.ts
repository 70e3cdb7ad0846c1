import { sql } from "drizzle-orm";

/**
 * What a claim writes on the queue row it takes (q), in the plain and the overlap-checked claim
 * alike. Fencing: the token rises on every claim, so the previous holder's writes match no row.
 * The clock is read through (SELECT now FROM clock), an InitPlan evaluated once per statement, not
 * by joining the clock CTE: a join is a nested loop over the claimed rows that also carries the
 * clock's whole row along with each of them (for the recheck of a concurrently updated row).
 */
export const TAKE_LEASE = sql`
  state = 'running',
  attempts = q.attempts + 1,
  lease_owner = ${sql.placeholder("workerId")},
  lease_expires_at = (SELECT now FROM clock) + make_interval(secs => q.lease_seconds),
  started_at = (SELECT now FROM clock),
  run_after = (SELECT now FROM clock) + make_interval(secs => q.lease_seconds)`;
