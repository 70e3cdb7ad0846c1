// The fleet's schedules, seeded in SQL (generate_series), and the tick's cost per minute of
// schedule time, measured by stepping a frozen database clock.
import type pg from "pg";
import type { Db } from "../../lib/db/client";
import { configDefaults } from "../../lib/config";
import { tickOnce } from "../../lib/runs/tick";
import { nextCronSlot } from "../../lib/schedules/cron";
import { advanceClock, setClock } from "../../lib/testing/clock";

/** Share of the fleet that is hourly at minute zero (a fifth: jobs set to the top of the hour). */
export const HOURLY_SHARE = 0.2;
/** Name prefixes: the hourly spike's schedules and the spread rest. */
export const HOURLY_PREFIX = "fleet-hourly-";
export const SPREAD_PREFIX = "fleet-spread-";

// The spread schedules, by spread index g (1..M), g % 20:
//   0-11 (60 %) fixed intervals from 1 minute to 1 day, INTERVALS[(g / 20) % 10];
//  12-15 (20 %) crons in time zones, CRONS x ZONES[(g / 20) % 16];
//  16-19 (20 %) intervals with 30 s of jitter, JITTERED[(g / 20) % 3].
// Each interval schedule's first slot is at a phase of its own in [T0, T0 + interval), so they do
// not pile up at one instant. About 0.12 runs per spread schedule per minute: 193,000 a minute
// (3,200/s) at 1.6 million.
const INTERVALS = [60, 300, 600, 900, 1800, 3600, 3600, 7200, 21600, 86400];
const CRONS = ["*/15 * * * *", "7,37 * * * *", "*/5 * * * *", "0 9 * * *"];
const ZONES = ["Europe/London", "America/New_York", "Asia/Tokyo", "Australia/Sydney"];
const JITTERED = [300, 900, 3600];
const JITTER_SECONDS = 30;

export type SeedReport = { hourly: number; spread: number; intervals: number; cronsInTimeZones: number; jittered: number; seconds: number };

/**
 * Insert `n` schedules: 20 % hourly at minute zero with their next slot at `due`, the rest spread as
 * above with their first slot at or after `t0`. Created at the database clock (created_at defaults
 * to sk_now(); the caller stands it at `t0`), as the API creates them: a schedule's age is what
 * `late` judges it by until its first success. Partition = sk_partition_of(id, P), the product's
 * rule: the id is taken from the identity sequence first (nextval in a subquery's select list runs
 * once per row).
 */
export async function seedFleet(pool: pg.Pool, o: { schedules: number; partitions: number; t0: Date; due: Date }): Promise<SeedReport> {
  const started = performance.now();
  const hourly = Math.round(o.schedules * HOURLY_SHARE);
  const spread = o.schedules - hourly;
  await pool.query(
    `INSERT INTO schedules (id, name, handler, cron, timezone, catch_up, next_slot_at, partition)
     OVERRIDING SYSTEM VALUE
     SELECT n.id, $4 || g, 'noop', '0 * * * *', 'UTC', 'latest', $2, sk_partition_of(n.id, $3)
     FROM (SELECT g, nextval(pg_get_serial_sequence('schedules', 'id')) AS id FROM generate_series(1, $1::int) g) n`,
    [hourly, o.due, o.partitions, HOURLY_PREFIX],
  );
  // The cron combinations' first slots, computed by the product's own cron maths.
  const combos = CRONS.flatMap((cron) => ZONES.map((timezone) => ({ cron, timezone, next: nextCronSlot({ cron, timezone }, new Date(o.t0.getTime() - 1)) })));
  await pool.query(
    `INSERT INTO schedules (id, name, handler, cron, every_seconds, timezone, catch_up, jitter_seconds, next_slot_at, partition)
     OVERRIDING SYSTEM VALUE
     SELECT n.id, $5 || g, 'noop', x.cron, x.every, x.tz, 'latest', x.jitter,
       CASE WHEN x.every IS NULL THEN x.next ELSE $2::timestamptz + make_interval(secs => mod(g::bigint * 7919, x.every)) END,
       sk_partition_of(n.id, $3)
     FROM (SELECT g, nextval(pg_get_serial_sequence('schedules', 'id')) AS id FROM generate_series(1, $1::int) g) n
     CROSS JOIN LATERAL (
       SELECT CASE WHEN mod(g, 20) BETWEEN 12 AND 15 THEN ($6::text[])[1 + mod(g / 20, $9)] END AS cron,
              CASE WHEN mod(g, 20) < 12 THEN ($4::int[])[1 + mod(g / 20, 10)]
                   WHEN mod(g, 20) >= 16 THEN ($10::int[])[1 + mod(g / 20, 3)] END AS every,
              CASE WHEN mod(g, 20) BETWEEN 12 AND 15 THEN ($7::text[])[1 + mod(g / 20, $9)] ELSE 'UTC' END AS tz,
              CASE WHEN mod(g, 20) >= 16 THEN $11::int ELSE 0 END AS jitter,
              ($8::timestamptz[])[1 + mod(g / 20, $9)] AS next
     ) x`,
    [
      spread,
      o.t0,
      o.partitions,
      INTERVALS,
      SPREAD_PREFIX,
      combos.map((c) => c.cron),
      combos.map((c) => c.timezone),
      combos.map((c) => c.next),
      combos.length,
      JITTERED,
      JITTER_SECONDS,
    ],
  );
  await pool.query(`ANALYZE schedules; ANALYZE schedule_search`);
  const { rows } = await pool.query<{ intervals: number; crons: number; jittered: number }>(
    `SELECT count(*) FILTER (WHERE every_seconds IS NOT NULL AND jitter_seconds = 0)::int AS intervals,
            count(*) FILTER (WHERE cron IS NOT NULL)::int AS crons,
            count(*) FILTER (WHERE jitter_seconds > 0)::int AS jittered
     FROM schedules WHERE name LIKE $1`,
    [`${SPREAD_PREFIX}%`],
  );
  return { hourly, spread, intervals: rows[0].intervals, cronsInTimeZones: rows[0].crons, jittered: rows[0].jittered, seconds: Math.round((performance.now() - started) / 100) / 10 };
}

/** Two tickers on disjoint halves of the partitions, as two workers would hold them, each until nothing is due. */
export async function tickToHorizon(db: Db, partitions: number, opts: { latenessPass: boolean }): Promise<{ created: number; schedules: number }> {
  const halves = [0, 1].map((h) => Array.from({ length: partitions }, (_, p) => p).filter((p) => p % 2 === h));
  const total = { created: 0, schedules: 0 };
  await Promise.all(
    halves.map(async (held) => {
      for (;;) {
        const r = await tickOnce(db, {
          partitions: held,
          horizonSeconds: configDefaults.tickHorizonSeconds,
          graceSeconds: configDefaults.catchUpGraceSeconds,
          batchSize: 1000,
          maxBatches: 10,
          latenessPass: opts.latenessPass,
        });
        total.created += r.created;
        total.schedules += r.schedules;
        if (r.schedules === 0) break;
      }
    }),
  );
  return total;
}

/**
 * How far ahead of the clock the tick has materialised: min(next_slot_at) - sk_now() over live
 * schedules, in seconds, one index probe per partition (schedules_tick_idx). Negative: a slot is
 * due that no run exists for yet (the horizon starved).
 */
export async function horizonAheadSeconds(pool: pg.Pool, partitions: number): Promise<number> {
  const { rows } = await pool.query<{ ahead: number | null }>(
    `SELECT extract(epoch FROM min(x.next) - sk_now())::float8 AS ahead
     FROM generate_series(0, $1::int - 1) p
     CROSS JOIN LATERAL (SELECT s.next_slot_at AS next FROM schedules s
       WHERE s.partition = p AND s.enabled AND s.deleted_at IS NULL ORDER BY s.next_slot_at LIMIT 1) x`,
    [partitions],
  );
  return rows[0].ahead ?? Infinity;
}

export type TickReport = {
  /** Minutes of schedule time stepped (the clock frozen, moved a minute at a time). */
  minutes: number;
  /** Wall seconds of tick work per minute of schedule time: median and max over the steps. */
  secondsPerMinute: { p50: number; max: number };
  /** Runs materialised and schedules advanced per minute of schedule time (median). */
  runsPerMinute: number;
  schedulesPerMinute: number;
  /** The least the tick was ahead of the clock, seconds, live (with workers) and stepped. */
  minHorizonAheadSeconds: number;
  /** A slot came due before its run existed, or a minute's tick took longer than a minute. Never true. */
  horizonStarved: boolean;
};

/**
 * Step the clock a minute at a time from wherever it stands and tick every partition to the
 * horizon after each step, timing it: the materialising work one minute of the fleet's schedule
 * time costs (the lateness pass, which the worker runs on a loop of its own, left out). Run with no
 * workers, after the live phases: the runs it writes are never claimed.
 */
export async function measureTick(pool: pg.Pool, db: Db, o: { partitions: number; minutes: number; liveMinAheadSeconds: number }): Promise<TickReport> {
  const { rows } = await pool.query<{ now: Date }>(`SELECT date_trunc('milliseconds', sk_now()) AS now`);
  await setClock(pool, rows[0].now);
  await tickToHorizon(db, o.partitions, { latenessPass: false });
  const steps: { seconds: number; created: number; schedules: number; ahead: number }[] = [];
  for (let i = 0; i < o.minutes; i++) {
    await advanceClock(pool, 60_000);
    const t0 = performance.now();
    const r = await tickToHorizon(db, o.partitions, { latenessPass: false });
    steps.push({ seconds: (performance.now() - t0) / 1000, ...r, ahead: await horizonAheadSeconds(pool, o.partitions) });
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  const secs = steps.map((s) => s.seconds);
  const minAhead = Math.min(o.liveMinAheadSeconds, ...steps.map((s) => s.ahead));
  return {
    minutes: o.minutes,
    secondsPerMinute: { p50: Math.round(med(secs) * 1000) / 1000, max: Math.round(Math.max(0, ...secs) * 1000) / 1000 },
    runsPerMinute: med(steps.map((s) => s.created)),
    schedulesPerMinute: med(steps.map((s) => s.schedules)),
    minHorizonAheadSeconds: Math.round(minAhead * 10) / 10,
    horizonStarved: minAhead < 0 || secs.some((s) => s >= 60),
  };
}
