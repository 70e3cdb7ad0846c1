// `npm run seed:demo [-- --runs 1000000] [--schedules 20]`: demo schedules and a large run history,
// for the console and for timing its queries at scale. Replaces earlier demo data (names "demo-…").
// Runs are made by INSERT … SELECT generate_series in one statement per schedule, so 1,000,000
// rows take seconds, not minutes. Database: DATABASE_URL, else the embedded server `npm start` uses.
import { performance } from "node:perf_hooks";
import pg from "pg";
import { ConfigError, loadConfig } from "../lib/config";
import { DatabaseUnreachableError, openDatabase } from "../lib/db/connect";
import { EmbeddedDatabaseError } from "../lib/db/embedded";
import { migrateDatabase } from "../lib/db/migrate";

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i === -1) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!Number.isInteger(v) || v < 0) throw new ConfigError(`--${name} must be a whole number, got "${process.argv[i + 1]}"`);
  return v;
}

/** Demo timings: intervals in seconds; `cron` ones are every 15 minutes on the wall clock. */
const KINDS: { every: number; cron?: string; handler: string; catchUp: "skip" | "latest" | "all" }[] = [
  { every: 60, handler: "noop", catchUp: "latest" },
  { every: 300, handler: "http", catchUp: "skip" },
  { every: 30, handler: "noop", catchUp: "latest" },
  { every: 900, cron: "*/15 * * * *", handler: "sql-ledger", catchUp: "all" },
  { every: 3600, cron: "0 * * * *", handler: "noop", catchUp: "latest" },
];

async function main() {
  const totalRuns = arg("runs", 1_000_000);
  const scheduleCount = Math.max(1, arg("schedules", 20));
  const config = loadConfig();
  const database = await openDatabase(config);
  const pool = new pg.Pool({ connectionString: database.url, max: 4 });
  const t0 = performance.now();
  try {
    await migrateDatabase(database.url);
    await pool.query(`DELETE FROM schedules WHERE name LIKE 'demo-%'`);
    const perSchedule = Math.ceil(totalRuns / scheduleCount);
    let made = 0;
    for (let i = 0; i < scheduleCount; i++) {
      const k = KINDS[i % KINDS.length];
      const n = Math.min(perSchedule, totalRuns - made);
      const name = `demo-${String(i + 1).padStart(2, "0")}-${k.cron ? "cron" : `every-${k.every}s`}`;
      const { rows } = await pool.query<{ id: string }>(
        `INSERT INTO schedules (name, description, handler, payload, cron, every_seconds, timezone, catch_up, next_slot_at, partition, enabled)
         VALUES ($1, $2, $3, $4, $5, $6, 'UTC', $7,
           to_timestamp((floor(extract(epoch FROM sk_now()) / $8) + 1) * $8), 0, true)
         RETURNING id`,
        [name, `Demo data: ${n} runs`, k.handler, k.handler === "http" ? { url: "https://example.test/hook" } : {}, k.cron ?? null, k.cron ? null : k.every, k.catchUp, k.every],
      );
      const id = rows[0].id;
      await pool.query(
        `UPDATE schedules s SET partition = sk_partition_of(s.id, c.partitions) FROM cluster c WHERE s.id = $1`,
        [id],
      );
      // Slot g is g intervals before the last slot; ~0.05 % dead, ~2 % skipped (missed), the rest done.
      await pool.query(
        `INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, origin, attempts, max_attempts,
                           started_at, finished_at, worker_id, duration_ms, last_error, skip_reason, created_at)
         SELECT s.id, s.partition, x.slot, x.slot, x.slot, x.state, 'schedule', CASE WHEN x.state = 'skipped' THEN 0 WHEN x.state = 'dead' THEN 6 ELSE 1 END, 6,
                CASE WHEN x.state = 'skipped' THEN NULL ELSE x.slot + interval '40 milliseconds' END,
                CASE WHEN x.state = 'skipped' THEN NULL ELSE x.slot + make_interval(secs => 0.05 + (g % 7) * 0.3) END,
                CASE WHEN x.state = 'skipped' THEN NULL ELSE 'demo-worker-' || (g % 3) END,
                CASE WHEN x.state = 'skipped' THEN NULL ELSE round(10 + (g % 7) * 300)::int END,
                CASE WHEN x.state = 'dead' THEN 'demo: upstream returned 503' END,
                CASE WHEN x.state = 'skipped' THEN 'missed'::skip_reason END,
                x.slot - interval '2 minutes'
         FROM schedules s,
              generate_series(1, $2::int) g,
              LATERAL (SELECT to_timestamp((floor(extract(epoch FROM sk_now()) / $3) - g) * $3) AS slot,
                              CASE WHEN g % 1997 = 0 THEN 'dead'::run_state WHEN g % 50 = 0 THEN 'skipped'::run_state ELSE 'done'::run_state END AS state) x
         WHERE s.id = $1`,
        [id, n, k.every],
      );
      made += n;
      process.stdout.write(`\r${made.toLocaleString()} runs`);
    }
    // Dead runs failed: their final attempt gets an attempts row, as the worker writes it. A run
    // that succeeded first time keeps its one attempt on the run row (worker_id, duration_ms).
    await pool.query(
      `INSERT INTO attempts (run_id, attempt, worker_id, started_at, finished_at, outcome, error, duration_ms)
       SELECT r.id, r.attempts, r.worker_id, r.started_at, r.finished_at, 'failed'::attempt_outcome, r.last_error, r.duration_ms
       FROM runs r JOIN schedules s ON s.id = r.schedule_id
       WHERE s.name LIKE 'demo-%' AND r.state = 'dead'`,
    );
    await pool.query("ANALYZE runs; ANALYZE attempts; ANALYZE schedules; ANALYZE schedule_search");
    const { rows } = await pool.query<{ n: string }>("SELECT count(*) AS n FROM runs");
    console.log(`\nseeded ${scheduleCount} demo schedules and ${made.toLocaleString()} runs (runs table: ${Number(rows[0].n).toLocaleString()} rows) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  } finally {
    await pool.end();
    await database.stop();
  }
}

main().catch((err) => {
  const known = err instanceof ConfigError || err instanceof DatabaseUnreachableError || err instanceof EmbeddedDatabaseError;
  console.error(`slotkeeper: ${known ? err.message : (err?.stack ?? String(err))}`);
  process.exit(1);
});
