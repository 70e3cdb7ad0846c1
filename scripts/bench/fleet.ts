// `npm run bench -- --fleet`: a whole fleet on one database. N schedules (default
// 2,000,000) seeded in SQL: 20 % hourly at minute zero, the rest spread (fleet-seed.ts). The
// database clock runs from T0 = due - (steady + 10) s: the spread schedules fire through a steady
// window, the hourly ones all come due at `due` while the rest keep firing, 20 console readers
// (each a page every 2 s, as an open console refetches) read through the spike; then one metrics
// scrape, the alert pass idle and busy, and the tick's cost per minute of schedule time with the
// clock stepped. The raw ceiling (raw.ts, partition-aware and pipelined) is measured first in the
// same run on the spike's S. Every figure about runs is read from the runs rows.
import type pg from "pg";
import { LIVE_REFRESH_MS } from "../../lib/client/api";
import type { Db } from "../../lib/db/client";
import { runClockFrom, setClock } from "../../lib/testing/clock";
import { HOURLY_PREFIX, HOURLY_SHARE, horizonAheadSeconds, measureTick, seedFleet, SPREAD_PREFIX, tickToHorizon, type SeedReport, type TickReport } from "./fleet-seed";
import { runAlertPasses, scrapeMetrics, startConsoleReaders, type ConsoleReport } from "./fleet-reads";
import { sampleRss, splitCpu, stopAll, waitFor, type CpuSplit } from "./procs";
import { runRawSpike, type RawReport } from "./raw";
import { awaitWorkersReady, BENCH_DUE, startWorkers } from "./spike";
import { checkpointBeforePhase, checkRuns, prepareSpikeTables, spikeStats, statementsBetween, statementsSnapshot, type RunsCheck, type SpikeStats, type StatementUse } from "./stats";

export type FleetOptions = {
  url: string;
  schedules: number;
  /** Seconds of steady firing before the spike (the steady lateness window). */
  steadySeconds: number;
  workers: number;
  batch: number;
  partitions: number;
  concurrency: number;
  pollIntervalMs: number;
  /** Minutes of schedule time the tick is stepped through (default 3). */
  tickMinutes?: number;
  /** Concurrent console readers during the spike (default 20; 0: none, and `console` is null). */
  readers?: number;
  /** A reader begins a read at most once per this many ms (default LIVE_REFRESH_MS, the console's refetch; 0: tight loops). */
  readerPaceMs?: number;
};

export type FleetReport = {
  schedules: number;
  seed: SeedReport;
  tick: TickReport;
  spike: SpikeStats & { check: RunsCheck; ratio: { startsPerSecond: number; completionsPerSecond: number }; raw: RawReport };
  steadyLateness: { runs: number; unstarted: number; p50Seconds: number; p99Seconds: number; windowSeconds: number };
  /**
   * firstSeconds: the first pass, which judges every schedule (once, when the fleet is loaded).
   * busySeconds: right after the workers drained, on tables no vacuum has touched since the spike
   * (this machine's server runs with autovacuum off); busyVacuumedSeconds: another 1 % turned failing
   * after VACUUM ANALYZE, the state autovacuum keeps a production server's tables in.
   */
  alertPass: {
    firstSeconds: number;
    idleSeconds: number;
    busySeconds: number;
    busyVacuumedSeconds: number;
    changedSchedules: number;
    peakRssMb: { first: number; idle: number; busy: number; busyVacuumed: number };
    checked: { first: number; idle: number; busy: number; busyVacuumed: number };
  };
  /**
   * PostgreSQL's shared-buffer traffic from half a second before the due instant until the spike
   * drained (pg_stat_database): `read` blocks came from outside shared buffers (the OS cache or disk).
   */
  spikeBuffers: { hit: number; read: number; readPerSpikeRun: number; hitRatio: number; byRelation: RelationReads[] };
  /** Over the same window: how busy the cores were and whose processes used them. */
  spikeCpu: CpuSplit;
  /** Over the same window: the statements that took the most time (pg_stat_statements; null when the server does not load it). */
  spikeStatements: StatementUse[] | null;
  metrics: { bytes: number; seconds: number };
  console: ConsoleReport | null;
  workerRssMb: number[];
  databaseSizeMb: number;
  /** The workers' first alert pass at start-up, after the one above (at least this long). */
  startupAlertPassSecondsAtLeast: number | null;
  targets: Record<string, boolean>;
};

const r3 = (x: number) => Math.round(x * 1000) / 1000;

/** The hourly spike's runs (slot `due`, schedules named fleet-hourly-*), with what spikeStats and checkRuns read. */
const spikeRuns = (due: Date) =>
  `SELECT r.started_at, r.finished_at, r.due_at, r.state FROM runs r JOIN schedules s ON s.id = r.schedule_id
   WHERE s.name LIKE '${HOURLY_PREFIX}%' AND r.scheduled_for = '${due.toISOString()}'`;

/**
 * True when no run due at or before `due` is pending or running: one probe of run_queue_claim_idx
 * per partition, and the running rows (at most the workers' concurrency).
 */
async function dueDrained(pool: pg.Pool, due: Date, partitions: number): Promise<boolean> {
  const { rows } = await pool.query<{ busy: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM generate_series(0, $2::int - 1) p CROSS JOIN LATERAL
              (SELECT 1 FROM run_queue q WHERE q.state = 'pending' AND q.partition = p AND q.run_after <= $1 LIMIT 1) x)
         OR EXISTS (SELECT 1 FROM run_queue q WHERE q.state = 'running' AND q.run_after <= $1) AS busy`,
    [due, partitions],
  );
  return rows[0].busy === false;
}

/** One table's heap, or one index, with its share of the spike's reads. */
export type RelationReads = { relation: string; read: number; hit: number; readPerSpikeRun: number };
type BufferCounts = { hit: number; read: number; relations: Map<string, { hit: number; read: number }> };

/**
 * This database's shared-buffer hits and reads so far (pg_stat_database, flushed by backends about
 * once a second), and the same per table heap and per index (pg_statio_user_tables / _indexes).
 */
async function bufferCounts(pool: pg.Pool): Promise<BufferCounts> {
  const { rows } = await pool.query<{ hit: number; read: number }>(`SELECT blks_hit::float8 AS hit, blks_read::float8 AS read FROM pg_stat_database WHERE datname = current_database()`);
  const { rows: rel } = await pool.query<{ relation: string; hit: number; read: number }>(
    `SELECT relname || ' (heap)' AS relation, coalesce(heap_blks_hit, 0)::float8 AS hit, coalesce(heap_blks_read, 0)::float8 AS read FROM pg_statio_user_tables
     UNION ALL
     SELECT indexrelname, coalesce(idx_blks_hit, 0)::float8, coalesce(idx_blks_read, 0)::float8 FROM pg_statio_user_indexes`,
  );
  return { ...rows[0], relations: new Map(rel.map((r) => [r.relation, { hit: r.hit, read: r.read }])) };
}

function bufferDelta(a: BufferCounts, b: BufferCounts, spikeRuns: number): FleetReport["spikeBuffers"] {
  const hit = b.hit - a.hit;
  const read = b.read - a.read;
  const runs = Math.max(1, spikeRuns);
  const byRelation = [...b.relations].map(([relation, after]) => {
    const before = a.relations.get(relation) ?? { hit: 0, read: 0 };
    const read = after.read - before.read;
    return { relation, read, hit: after.hit - before.hit, readPerSpikeRun: r3(read / runs) };
  });
  byRelation.sort((x, y) => y.read - x.read);
  return { hit, read, readPerSpikeRun: r3(read / runs), hitRatio: r3(hit / Math.max(1, hit + read)), byRelation: byRelation.slice(0, 10) };
}

/** Each client backend's application_name by pid (the workers', the console readers', the harness's). */
async function backendNames(pool: pg.Pool): Promise<Map<number, string>> {
  const { rows } = await pool.query<{ pid: number; name: string }>(`SELECT pid, application_name AS name FROM pg_stat_activity WHERE backend_type = 'client backend'`);
  return new Map(rows.map((r) => [r.pid, r.name]));
}

export async function runFleet(pool: pg.Pool, db: Db, o: FleetOptions): Promise<FleetReport> {
  const due = BENCH_DUE;
  const t0 = new Date(due.getTime() - (o.steadySeconds + 10) * 1000);
  // The ceiling in the same run, on the spike's S, before the fleet is there.
  const hourly = Math.round(o.schedules * HOURLY_SHARE);
  const raw = await runRawSpike(pool, { url: o.url, schedules: hourly, workers: o.workers, batch: o.batch, loopsPerWorker: 2, partitions: o.partitions });

  await setClock(pool, t0);
  const seed = await seedFleet(pool, { schedules: o.schedules, partitions: o.partitions, t0, due });
  // The first horizon, materialised before the workers start (as the spike bench does): the
  // workers' own tick carries it on from there.
  await tickToHorizon(db, o.partitions, { latenessPass: true });
  // One alert pass over the whole fleet before the workers start, as a fleet in production stands
  // after its first pass: each worker's first pass then reads what changed since, not every schedule.
  const first = await runAlertPasses(o.url, 1);
  await prepareSpikeTables(pool, ["schedules", "runs", "run_queue"]);
  await checkpointBeforePhase(pool);

  const procs = startWorkers({ url: o.url, workers: o.workers, batch: o.batch, concurrency: o.concurrency, pollIntervalMs: o.pollIntervalMs, alerts: false });
  let stopRss = () => {};
  let readers: ReturnType<typeof startConsoleReaders> | null = null;
  let liveMinAhead = Infinity;
  try {
    const startupAlertPassSecondsAtLeast = await awaitWorkersReady(pool, o);
    stopRss = sampleRss(procs);
    await runClockFrom(pool, t0);
    const clockStartedAt = performance.now();
    // The tick's lead over the clock, sampled through the live phases (horizonStarved).
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        liveMinAhead = Math.min(liveMinAhead, await horizonAheadSeconds(pool, o.partitions));
        await new Promise((r) => setTimeout(r, 2000));
      }
    })();
    const { rows: pick } = await pool.query<{ id: number; name: string }>(
      `SELECT id, name FROM schedules WHERE name LIKE $1 ORDER BY id OFFSET (SELECT count(*) / 2 FROM schedules WHERE name LIKE $1) LIMIT 1`,
      [`${SPREAD_PREFIX}%`],
    );
    const target = { search: pick[0].name.slice("fleet-".length), historyScheduleId: Number(pick[0].id) };
    // Reads counted from half a second before the due instant until the spike has drained; the
    // readers start one pace and two seconds before that, as consoles already open at the top of
    // the hour, each having read its first page.
    const paceMs = o.readerPaceMs ?? LIVE_REFRESH_MS;
    const recordFrom = clockStartedAt + (o.steadySeconds + 10) * 1000 - 500;
    await new Promise((r) => setTimeout(r, Math.max(0, recordFrom - paceMs - 2000 - performance.now())));
    const readerCount = o.readers ?? 20;
    readers = readerCount > 0 ? startConsoleReaders(o.url, target, readerCount, paceMs, recordFrom) : null;
    await new Promise((r) => setTimeout(r, Math.max(0, recordFrom - performance.now())));
    const statementsBefore = await statementsSnapshot(pool);
    const buffersBefore = await bufferCounts(pool);
    const cpuUntil = await splitCpu(procs, () => backendNames(pool));
    await waitFor("fleet spike to drain", () => dueDrained(pool, due, o.partitions), 900_000, 500);
    const spikeCpu = await cpuUntil();
    const buffersAfter = await bufferCounts(pool);
    const spikeStatements = statementsBetween(statementsBefore, await statementsSnapshot(pool), 15);
    let consoleReport: ConsoleReport | null = null;
    if (readers) {
      // A spike shorter than a few reads (small fleets) would leave percentiles of nothing: read on
      // until every page has 5 calls (their timings then partly after the spike).
      const r = readers;
      await waitFor("console reads", async () => r.fewestCalls() >= 5, 120_000, 100);
      consoleReport = await readers.stop();
      readers = null;
    }
    sampling = false;
    await sampler;

    const stats = await spikeStats(pool, spikeRuns(due), due);
    const check = await checkRuns(pool, spikeRuns(due), seed.hourly);
    // Steady: the spread schedules' runs due from 5 s after the clock started to 1 s before the spike.
    const from = new Date(t0.getTime() + 5_000);
    const to = new Date(due.getTime() - 1_000);
    const { rows: st } = await pool.query<{ n: number; unstarted: number; p50: number | null; p99: number | null }>(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE r.started_at IS NULL)::int AS unstarted,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM r.started_at - r.due_at))::float8 AS p50,
              percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM r.started_at - r.due_at))::float8 AS p99
       FROM runs r JOIN schedules s ON s.id = r.schedule_id
       WHERE s.name LIKE $3 AND r.due_at >= $1 AND r.due_at < $2`,
      [from, to, `${SPREAD_PREFIX}%`],
    );
    const metrics = await scrapeMetrics(db);
    // The alert pass with the clock frozen, so nothing changes unless the bench changes it. The
    // workers run on until every run due by the frozen instant has been claimed and finished: a
    // backlog left pending is a state that changes with every claim (backlogged and unserved are
    // read on every pass, docs/alerts-and-metrics.md), not an idle fleet.
    const { rows: now } = await pool.query<{ now: Date }>(`SELECT date_trunc('milliseconds', sk_now()) AS now`);
    await setClock(pool, now[0].now);
    await waitFor("the backlog up to the frozen clock to drain", () => dueDrained(pool, now[0].now, o.partitions), 900_000, 500);
    stopRss();
    const workerRssMb = procs.map((p) => Math.round(p.peakRssMb));
    await stopAll(procs);

    // One pass to catch up, one idle; then 1 % of schedules get a dead run (they turn failing) and
    // one pass; then the same once the tables are vacuumed.
    const idle = await runAlertPasses(o.url, 2);
    // A dead run for every schedule whose id is `share` mod 100 (1 % of the fleet): each turns failing.
    const turnFailing = async (share: number) =>
      (
        await pool.query(
          `INSERT INTO runs (schedule_id, partition, scheduled_for, due_at, run_after, state, attempts, max_attempts, origin)
           SELECT id, partition, sk_now() - interval '3 days', sk_now() - interval '3 days', sk_now() - interval '3 days', 'dead', 6, 6, 'backfill'
           FROM schedules WHERE mod(id, 100) = $1 AND name LIKE 'fleet-%'`,
          [share],
        )
      ).rowCount ?? 0;
    const changed = await turnFailing(0);
    const busy = await runAlertPasses(o.url, 1);
    // Vacuum and analyse as autovacuum would have by now on a server that runs it (this one does
    // not), then the same with the next 1 %.
    await pool.query(`VACUUM ANALYZE`);
    const changedAfterVacuum = await turnFailing(1);
    const busyVacuumed = await runAlertPasses(o.url, 1);
    if (changedAfterVacuum !== changed) throw new Error(`the two busy passes turned ${changed} and ${changedAfterVacuum} schedules failing`);

    const tick = await measureTick(pool, db, { partitions: o.partitions, minutes: o.tickMinutes ?? 3, liveMinAheadSeconds: liveMinAhead });
    const { rows: size } = await pool.query<{ mb: number }>(`SELECT (pg_database_size(current_database()) / 1048576.0)::float8 AS mb`);
    const steady = st[0];
    const report: Omit<FleetReport, "targets"> = {
      schedules: o.schedules,
      seed,
      tick,
      spike: {
        ...stats,
        check,
        ratio: { startsPerSecond: r3(stats.claimsPerSecond / raw.claimsPerSecond), completionsPerSecond: r3(stats.completionsPerSecond / raw.completionsPerSecond) },
        raw,
      },
      steadyLateness: { runs: steady.n, unstarted: steady.unstarted, p50Seconds: r3(steady.p50 ?? 0), p99Seconds: r3(steady.p99 ?? 0), windowSeconds: (to.getTime() - from.getTime()) / 1000 },
      alertPass: {
        firstSeconds: first.seconds[0],
        idleSeconds: idle.seconds[idle.seconds.length - 1],
        busySeconds: busy.seconds[0],
        busyVacuumedSeconds: busyVacuumed.seconds[0],
        changedSchedules: changed,
        peakRssMb: { first: first.peakRssMb, idle: idle.peakRssMb, busy: busy.peakRssMb, busyVacuumed: busyVacuumed.peakRssMb },
        checked: { first: first.checked[0], idle: idle.checked[idle.checked.length - 1], busy: busy.checked[0], busyVacuumed: busyVacuumed.checked[0] },
      },
      spikeBuffers: bufferDelta(buffersBefore, buffersAfter, stats.runs),
      spikeCpu,
      spikeStatements,
      metrics,
      console: consoleReport,
      workerRssMb,
      databaseSizeMb: Math.round(size[0].mb),
      startupAlertPassSecondsAtLeast,
    };
    const consoleP95 = Object.values(consoleReport ?? {}).filter((v): v is { p50Ms: number; p95Ms: number; calls: number } => typeof v === "object");
    return {
      ...report,
      // The targets on this machine (2 cores, PostgreSQL 15 defaults).
      targets: {
        spikeAllStartedWithin10s: stats.lastStartedAfterSeconds <= 10,
        spikeAtLeast90PercentOfRaw: report.spike.ratio.startsPerSecond >= 0.9,
        everySpikeRunStartedOnceAndDone: check.ok && raw.check.ok,
        steadyP99AtMost1s: steady.unstarted === 0 && report.steadyLateness.p99Seconds <= 1,
        idleAlertPassUnder1s: report.alertPass.idleSeconds < 1,
        // Judged on the vacuumed tables a production server's autovacuum keeps; busySeconds is beside it.
        busyAlertPassUnder5s: report.alertPass.busyVacuumedSeconds < 5,
        scrapeUnder1MbAndHalfASecond: metrics.bytes < 1_048_576 && metrics.seconds < 0.5,
        consoleP95Under300ms: consoleReport !== null && consoleP95.every((v) => v.p95Ms < 300),
        workerRssUnder300Mb: workerRssMb.every((m) => m < 300),
        horizonNeverStarved: !tick.horizonStarved,
      },
    };
  } finally {
    if (readers) await readers.stop().catch(() => undefined);
    stopRss();
    await stopAll(procs);
    await setClock(pool, null);
  }
}
