/**
 * A large fleet in a few statements (generate_series), for the list and Overview tests and the
 * console's e2e journeys at scale. Schedule i (1-based) is, by arithmetic on i alone, so a test can
 * say what it expects without reading the code under test:
 * - name `fleet-<i, 7 digits>`, description "nightly report" when i % 3 = 0, else "sync job";
 *   one in 1,000 (i % 1000 = 7) says "needle" in its description;
 * - handler `h<i % 8>`, queue "bulk" when i % 10 = 0 else "default", tags {team-<i % 4>};
 * - paused when i % 13 = 0; managed by "fleet.yaml" when i % 7 = 0; cron "0 * * * *" when i is
 *   even, else every 60 + (i % 5) × 60 s;
 * - next_slot_at = the clock + (i × 37 % 86,400) s; created 30 days before the clock;
 * - partition by the product's one rule, sk_partition_of(id, the cluster's count), as
 *   createSchedule gives it: the id is taken from the table's identity sequence first;
 * - runs: a done run finished (i % 50) minutes ago when i % 5 <> 0 (never succeeded otherwise);
 *   a dead run when i % 101 = 0; a pending run due (i % 40) minutes ago when i % 17 = 0;
 * - the successes applied to the stored last success, as the alert pass applies them
 *   (lib/schedules/last-success.ts): the fleet is as it stands after a pass.
 */
import type pg from "pg";
import { createDb } from "../db/client";
import { applyLastSuccessChanges } from "../schedules/last-success";

export async function seedFleet(pool: pg.Pool, count: number): Promise<void> {
  await pool.query(
    `INSERT INTO schedules (id, name, description, handler, queue, tags, enabled, managed_by, cron, every_seconds, next_slot_at, partition, created_at, updated_at)
     OVERRIDING SYSTEM VALUE
     SELECT n.id, 'fleet-' || lpad(i::text, 7, '0'),
       CASE WHEN i % 1000 = 7 THEN 'the needle job' WHEN i % 3 = 0 THEN 'nightly report' ELSE 'sync job' END,
       'h' || (i % 8), CASE WHEN i % 10 = 0 THEN 'bulk' ELSE 'default' END, ARRAY['team-' || (i % 4)],
       i % 13 <> 0, CASE WHEN i % 7 = 0 THEN 'fleet.yaml' END,
       CASE WHEN i % 2 = 0 THEN '0 * * * *' END, CASE WHEN i % 2 = 1 THEN 60 + (i % 5) * 60 END,
       sk_now() + make_interval(secs => (i * 37) % 86400), sk_partition_of(n.id, c.partitions), sk_now() - interval '30 days', sk_now() - interval '30 days'
     -- nextval in the subquery's select list: once per row (a volatile call is never flattened away).
     FROM (SELECT i, nextval(pg_get_serial_sequence('schedules', 'id')) AS id FROM generate_series(1, $1::int) AS i) n
     CROSS JOIN cluster c WHERE c.id = 1`,
    [count],
  );
  // Runs by the same arithmetic, on the schedule's number parsed back from its name.
  await pool.query(
    `INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, attempts, max_attempts, started_at, finished_at)
     SELECT s.id, s.partition, t.at, t.at, t.at, 'done', 1, 1, t.at, t.at
     FROM schedules s CROSS JOIN LATERAL (SELECT substr(s.name, 7)::int AS i) n
     CROSS JOIN LATERAL (SELECT sk_now() - make_interval(mins => n.i % 50) AS at) t
     WHERE s.name LIKE 'fleet-%' AND n.i % 5 <> 0`,
  );
  await pool.query(
    `INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, attempts, max_attempts)
     SELECT s.id, s.partition, t.at, t.at, t.at, 'dead', 1, 1
     FROM schedules s CROSS JOIN LATERAL (SELECT substr(s.name, 7)::int AS i) n
     CROSS JOIN LATERAL (SELECT sk_now() - interval '2 days' AS at) t
     WHERE s.name LIKE 'fleet-%' AND n.i % 101 = 0`,
  );
  await pool.query(
    `INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, attempts, max_attempts)
     SELECT s.id, s.partition, t.at, t.at, t.at, 'pending', 0, 1
     FROM schedules s CROSS JOIN LATERAL (SELECT substr(s.name, 7)::int AS i) n
     CROSS JOIN LATERAL (SELECT sk_now() - make_interval(mins => n.i % 40) - interval '1 second' AS at) t
     WHERE s.name LIKE 'fleet-%' AND n.i % 17 = 0`,
  );
  await applyLastSuccessChanges(createDb(pool));
  await pool.query("ANALYZE schedules; ANALYZE schedule_search; ANALYZE runs; ANALYZE run_queue; ANALYZE schedule_last_success");
}
