// `npm run chaos [-- --short] [--workers K --schedules M --minutes T --seed N]`: the fault suite.
// K worker processes (one with its wall clock minutes off, one restarted every 10 s) and extra
// tickers run M sql-ledger schedules through a proxy that cuts connections around commits, while
// workers are killed and frozen, PostgreSQL restarts once and the API changes schedules. Then the
// faults stop, the system drains, and an independent oracle checks that nothing was lost or
// doubled. Prints one JSON report; exits 1 when any check fails. See docs/faults.md.
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { createApiClient } from "./chaos/api";
import { killConsoleAt, checkWholeChanges, superviseConsole, type ConsoleKill, type ConsoleSupervisor } from "./chaos/console-faults";
import { serverLogOf, startChaosDatabase, type ChaosDatabase } from "./chaos/database";
import { runFaults } from "./chaos/faults";
import type { OracleSchedule } from "./chaos/oracle";
import { parseOptions } from "./chaos/options";
import { planSchedules, type ScheduleBody } from "./chaos/plan";
import { startChaosProxy, type ChaosProxy } from "./chaos/proxy";
import { createRandom, quantile } from "./chaos/random";
import { readRunHealth } from "./chaos/checks";
import { buildReport } from "./chaos/report";
import { failoversWhenDue, startStandby, watchCrashes, type Standby } from "./chaos/standby";
import { ensureBuild, startWeb } from "./chaos/web";
import { startWitness, type Witness } from "./chaos/witness";
import { DATABASE_OUTAGE_ALLOWANCE_SECONDS, worstCaseLatenessSeconds } from "../lib/schedules/lateness";
import { createWorkerPool, type WorkerPool } from "./chaos/workers";
import { runTimedFaults } from "./chaos/timed";
import { dbSpan } from "./chaos/clock-step";
import { runSeeds } from "./chaos/seeds";
import { runTimingEdits, type TimingEditLog } from "./chaos/timing-edits";
import type { TimedSchedule, TimedState } from "./chaos/timing-oracle";

/** The workers' SLOTKEEPER_DB_QUERY_TIMEOUT_MS: a silent connection is given up after this. */
const QUERY_TIMEOUT_MS = 4000;
/** `--seeds a,b,c`: this file runs itself once per seed (scripts/chaos/seeds.ts) instead. */
const seedsMode = process.argv.includes("--seeds");
if (seedsMode)
  void runSeeds(process.argv.slice(2)).then(
    (ok: boolean) => process.exit(ok ? 0 : 1),
    (err: unknown) => (process.stderr.write(`chaos: ${err instanceof Error ? err.message : String(err)}\n`), process.exit(2)),
  );

const o = parseOptions(seedsMode ? [] : process.argv.slice(2));
const random = createRandom(o.seed);
const runTag = `${Date.now().toString(36)}`;
o.logDir = path.resolve(".slotkeeper/chaos", runTag);
if (!seedsMode) fs.mkdirSync(o.logDir, { recursive: true });
const log = (line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let db: ChaosDatabase | undefined;
let proxy: ChaosProxy | undefined;
let web: ConsoleSupervisor | undefined;
/** Every standby made: the first before the faults, one more after each failover. */
const standbys: Standby[] = [];
let monitorProxy: ChaosProxy | undefined;
let consoleProxy: ChaosProxy | undefined;
let workers: WorkerPool | undefined;
let monitor: pg.Pool | undefined;
let witness: Witness | undefined;
const tickers: ChildProcess[] = [];

// Last resort on any exit path: no worker, ticker or console may outlive the run.
process.on("exit", () => {
  workers?.killAll();
  for (const t of tickers) if (t.exitCode === null) t.kill("SIGKILL");
  if (web?.web.child.exitCode === null) web.web.child.kill("SIGKILL");
});
for (const sig of ["SIGINT", "SIGTERM"] as const) process.on(sig, () => void cleanup().finally(() => process.exit(130)));

async function cleanup() {
  proxy?.setCutting(false);
  if (workers) await Promise.all(workers.live().map((w) => (workers!.resume(w), workers!.terminate(w, 3000))));
  for (const t of tickers) if (t.exitCode === null) t.kill("SIGKILL");
  consoleProxy?.setCutting(false);
  await web?.web.stop().catch(() => {});
  await proxy?.close().catch(() => {});
  await consoleProxy?.close().catch(() => {});
  await monitorProxy?.close().catch(() => {});
  await monitor?.end().catch(() => {});
  await witness?.close().catch(() => {});
  // The servers' own logs outlive their clusters, beside the processes' logs.
  for (const [k, pgdata] of [db?.cluster?.pgdata, ...standbys.map((s) => s.pgdata)].entries()) {
    if (pgdata && fs.existsSync(serverLogOf(pgdata))) fs.copyFileSync(serverLogOf(pgdata), path.join(o.logDir, k === 0 ? "postgres-primary.log" : `postgres-standby-${k}.log`));
  }
  await db?.stop().catch(() => {});
  for (const s of standbys) await s.stop().catch(() => {});
}

/** Create the schedule through the API, retrying refusals; returns its id and create window. */
async function createSchedule(api: ReturnType<typeof createApiClient>, body: ScheduleBody) {
  for (let i = 0; i < 5; i++) {
    const { call, json } = await api.create(body);
    if (call.acked) return { window: [call.startedAt, call.endedAt] as [number, number], json };
    log(`chaos: create ${body.name} refused (${call.status}): ${call.error}`);
    await sleep(1000);
  }
  throw new Error(`could not create schedule ${body.name}`);
}

/**
 * Every run and attempt as the database has them at the end, beside the report: a failed check
 * can then be traced to the rows it judged after the throwaway cluster is gone.
 */
async function dumpHistory(pool: pg.Pool, dir: string) {
  const tables: [string, string][] = [
    ["runs", "SELECT r.*, s.name AS schedule FROM runs r JOIN schedules s ON s.id = r.schedule_id ORDER BY r.id"],
    ["attempts", "SELECT * FROM run_attempts ORDER BY run_id, attempt"],
    ["audit", "SELECT * FROM audit_log ORDER BY id"],
    ["claims", "SELECT * FROM chaos_claims ORDER BY at"],
  ];
  for (const [name, sql] of tables) {
    const rows = (await pool.query(sql)).rows;
    fs.writeFileSync(path.join(dir, `${name}.jsonl`), rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  }
}

/** How long acknowledged API changes took to answer (ms). */
function answerMs(calls: { acked: boolean; startedAt: number; endedAt: number }[]) {
  const ms = calls.filter((c) => c.acked).map((c) => c.endedAt - c.startedAt);
  return { p50: quantile(ms, 0.5), max: quantile(ms, 1) };
}

async function main() {
  const started = Date.now();
  // This process carries every proxied connection: a stall of its event loop is a stall of the
  // database as the workers see it, so it is logged.
  let lastBeat = Date.now();
  setInterval(() => {
    const late = Date.now() - lastBeat - 100;
    if (late > 500) log(`chaos: this process's event loop stalled ${late} ms`);
    lastBeat = Date.now();
  }, 100).unref();
  log(`chaos: seed ${o.seed}, ${o.workers} workers, ${o.schedules} schedules, ${o.minutes} min; logs in ${o.logDir}`);
  await ensureBuild(log);
  db = await startChaosDatabase();
  // The failover needs a cluster of our own to stand by; a server we do not own cannot fail over.
  if (db.cluster) standbys.push(await startStandby(db, { synchronous: true, log }));
  const standby = standbys[0];
  const crashes = watchCrashes(db);
  // Every process reaches the database through a proxy, so a failover moves them all at once;
  // the monitor's never cuts.
  const target = { host: db.host, port: db.port };
  const throughProxy = (p: ChaosProxy) => {
    const u = new URL(db!.url);
    u.port = String(p.port);
    return u.toString();
  };
  monitorProxy = await startChaosProxy({ target, random, cutRate: 0, maxCuts: 0 });
  monitor = new pg.Pool({ connectionString: throughProxy(monitorProxy), max: 3, application_name: "slotkeeper:chaos-monitor" });
  monitor.on("error", () => {});
  // The oracle's times come from this process; the database runs on the same host, and the
  // measured offset is reported so a disagreement would show.
  const t0 = Date.now();
  const dbNow = Number((await monitor.query("SELECT extract(epoch FROM clock_timestamp()) * 1000 AS n")).rows[0].n);
  const clockOffsetMs = Math.round(dbNow - (t0 + Date.now()) / 2);

  proxy = await startChaosProxy({ target, random, cutRate: o.cutRate, maxCuts: o.maxCuts });
  const proxiedUrl = throughProxy(proxy);
  // The console's own cutting proxy: its budget is not used up by the workers' cuts.
  consoleProxy = await startChaosProxy({ target, random: createRandom(o.seed + 1), cutRate: o.consoleCutRate, maxCuts: o.consoleMaxCuts });
  const consoleUrl = throughProxy(consoleProxy);
  const webLog = path.join(o.logDir, "web.log");
  web = superviseConsole(await startWeb(consoleUrl, webLog), (port) => startWeb(consoleUrl, webLog, port));
  const api = createApiClient(web.web.baseUrl);

  witness = await startWitness();
  const plan = planSchedules(o, runTag, witness.url);
  const created = new Map<string, [number, number]>();
  for (const body of [...plan.ledger, ...plan.heartbeat, ...plan.witnessed, plan.fail, ...plan.hog, ...plan.timing]) created.set(body.name, (await createSchedule(api, body)).window);

  const env = {
    SLOTKEEPER_TICK_HORIZON_SECONDS: "10",
    SLOTKEEPER_LEASE_SAFETY_MARGIN_MS: "1000",
    SLOTKEEPER_SHUTDOWN_GRACE_MS: "2000",
    SLOTKEEPER_CONCURRENCY: "10",
    // The witness listens on loopback, which the outbound policy refuses unless opened on purpose.
    SLOTKEEPER_OUTBOUND_ALLOW: "127.0.0.1",
    SLOTKEEPER_DB_QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS),
  };
  workers = createWorkerPool({ databaseUrl: proxiedUrl, logDir: o.logDir, pollIntervalMs: o.pollIntervalMs, env, skewMs: o.skewMs, maxSpawns: 40 + Math.ceil(o.minutes * 20) });
  workers.start("skewed");
  workers.start("churn");
  for (let i = 2; i < o.workers; i++) workers.start("normal");

  const deadline = Date.now() + o.minutes * 60_000;
  for (let i = 0; i < o.tickers; i++) {
    const out = fs.openSync(path.join(o.logDir, `ticker-${i}.log`), "a");
    tickers.push(
      spawn(process.execPath, ["--import", "tsx", "scripts/chaos/ticker.ts"], {
        env: { ...process.env, ...env, DATABASE_URL: proxiedUrl, CHAOS_TICKER_UNTIL: String(deadline) },
        stdio: ["ignore", out, out],
      }),
    );
    fs.closeSync(out);
  }
  // The faults start once every initial worker has registered: the stated bound is for running workers.
  for (let i = 0; i < 120; i++) {
    const r = await monitor.query("SELECT count(*)::int AS n FROM workers WHERE stopped_at IS NULL");
    if (r.rows[0].n >= o.workers) break;
    await sleep(250);
  }
  const workersUpAt = Date.now();
  proxy.setCutting(true);
  consoleProxy.setCutting(true);
  const editable = plan.ledger.slice(1).map((s) => s.name);
  // The failover and the console kills come at fixed points of the fault phase, the same every run.
  const phaseAt = (f: number) => workersUpAt + (deadline - workersUpAt) * f;
  const initialState = (b: ScheduleBody): TimedState => ({
    ...("everySeconds" in b ? { everySeconds: b.everySeconds } : { cron: b.cron, timezone: b.timezone }),
    catchUp: b.catchUp,
    maxLatenessSeconds: b.maxLatenessSeconds ?? null,
    enabled: true,
  });
  const [faults, failovers, consoleKills, timed, timingEdits] = await Promise.all([
    runFaults({ o, random, pool: monitor, workers, db, api, editable, pausable: plan.ledger[0].name, failSchedule: plan.fail.name, laterSchedule: plan.later, log }, deadline),
    standby
      ? failoversWhenDue({ db, standbys, proxies: [proxy, consoleProxy, monitorProxy], api, editable, pick: random.pick, recoveryTimeoutMs: 60_000, lagMs: 3000, log, at: o.failoverAt.map(phaseAt), deadline, crashes, settleMs: o.leaseSeconds * 1000 + 1000 })
      : Promise.resolve([]),
    killConsoleAt({ console: web, api, editable, at: o.consoleKillsAt.map(phaseAt), deadline, delayMs: () => random.int(0, 30), log }),
    runTimedFaults({ o, random, pool: monitor, url: db.url, workers, proxy, queryTimeoutMs: QUERY_TIMEOUT_MS, log }, workersUpAt, deadline),
    runTimingEdits({ api, random: createRandom(o.seed + 2), schedules: plan.timing.map((b) => ({ name: b.name, state: initialState(b) })), log }, deadline),
  ]);
  faults.faults.push(...timed.silentEvents);

  // Stop the faults, keep a steady set of workers, and let everything up to the cut finish.
  proxy.setCutting(false);
  consoleProxy.setCutting(false);
  const cutAt = Date.now();
  for (const w of workers.live()) if (w.stopped) workers.resume(w);
  while (workers.live().filter((w) => w.role !== "churn").length < o.workers - 1) workers.start("normal");
  const drainDeadline = Date.now() + (o.leaseSeconds * 2 + 30) * 1000;
  for (let i = 0; i < 1000 && Date.now() < drainDeadline; i++) {
    const r = await monitor.query("SELECT count(*)::int AS n FROM run_queue WHERE state IN ('pending', 'running') AND scheduled_for <= to_timestamp($1 / 1000.0)", [cutAt]);
    if (r.rows[0].n === 0) break;
    await sleep(500);
  }
  const drainMs = Date.now() - cutAt;
  // The workers stop before the report is worked out: this process carries every proxied
  // connection, and its own work on the report must not stall a worker that still holds leases
  // (a stall here made live workers lose them, and the report then counted it). What needs them
  // alive, runs stuck in running that no live worker took over, is read first.
  const health = await readRunHealth(monitor, cutAt + clockOffsetMs, o.pollIntervalMs);
  await Promise.all(workers.live().map((w) => (workers!.resume(w), workers!.terminate(w, 5000))));

  const ids = new Map((await monitor.query<{ id: number; name: string }>("SELECT id::int, name FROM schedules")).rows.map((r) => [r.name, r.id]));
  const all = [...plan.ledger, ...plan.heartbeat, ...plan.witnessed, plan.fail, ...plan.hog, ...[...faults.created.keys()].map((n, k) => plan.later(k))];
  const windows = new Map([...created, ...faults.created]);
  const schedules: OracleSchedule[] = all
    .filter((b) => ids.has(b.name))
    .map((b) => ({
      id: ids.get(b.name)!,
      name: b.name,
      everySeconds: "everySeconds" in b ? b.everySeconds : undefined,
      cron: "cron" in b ? b.cron : undefined,
      timezone: "timezone" in b ? b.timezone : undefined,
      createdWindow: dbSpan(timed.clockSteps, ...windows.get(b.name)!).map((t) => t + clockOffsetMs) as [number, number],
      // A slot near a pause may be skipped (reason paused) or left out: optional, never doubled.
      // On the database clock, which a clock step moved while the pause lasted.
      optionalWindows: (faults.pauses.get(b.name) ?? []).map(([a, z]) => {
        const [lo, hi] = dbSpan(timed.clockSteps, a, z ?? Infinity);
        return [lo + clockOffsetMs - 10_000, hi + clockOffsetMs + 2000] as [number, number];
      }),
      finalState: b.handler === "fail" ? "dead" : "done",
    }));
  // The timing schedules' edits, on the database clock like every other window.
  const onDb = (a: number, z: number) => dbSpan(timed.clockSteps, a, z).map((t) => t + clockOffsetMs) as [number, number];
  const timedSchedules: TimedSchedule[] = plan.timing
    .filter((b) => ids.has(b.name))
    .map((b) => ({
      id: ids.get(b.name)!,
      name: b.name,
      createdWindow: onDb(...windows.get(b.name)!),
      initial: initialState(b),
      edits: timingEdits.filter((e: TimingEditLog) => e.name === b.name).map((e) => ({ window: onDb(...e.window), acked: e.acked, change: e.change })),
      finalState: "done",
    }));
  const timedUnsure: [number, number][] = [
    ...faults.dbRestarts.map((r) => [r.at + clockOffsetMs, r.at + clockOffsetMs + r.tookMs + DATABASE_OUTAGE_ALLOWANCE_SECONDS * 1000] as [number, number]),
    ...failovers.map((f) => [f.at + clockOffsetMs, f.at + clockOffsetMs + f.tookMs + DATABASE_OUTAGE_ALLOWANCE_SECONDS * 1000] as [number, number]),
    ...timed.clockSteps.map((c) => [Math.min(c.dbBefore, c.dbAfter) - 5000, Math.max(c.dbBefore, c.dbAfter) + 5000] as [number, number]),
  ];
  const kinds = (pred: (e: TimingEditLog) => boolean) => timingEdits.some((e) => e.acked && pred(e));
  const report = await buildReport({
    health,
    timedSchedules,
    timedUnsure,
    pool: monitor,
    schedules,
    cutAt: cutAt + clockOffsetMs,
    faults,
    calls: api.calls,
    leaseMs: o.leaseSeconds * 1000,
    pollMs: o.pollIntervalMs,
    logDir: o.logDir,
    skewMs: o.skewMs,
    statedBoundMs: worstCaseLatenessSeconds({ jitterSeconds: 0, leaseSeconds: o.leaseSeconds }, o.pollIntervalMs) * 1000,
    outageAllowanceMs: DATABASE_OUTAGE_ALLOWANCE_SECONDS * 1000,
    clockOffsetMs,
    witness: { hits: witness.hits, scheduleIds: plan.witnessed.map((b) => ids.get(b.name)).filter((x): x is number => x !== undefined) },
    heartbeatScheduleIds: plan.heartbeat.map((b) => ids.get(b.name)).filter((x): x is number => x !== undefined),
    proxyCuts: proxy.stats.cutsBeforeCommit + proxy.stats.cutsAfterCommit,
    cutsAfterCommitAt: proxy.cutsAfterCommitAt,
    workersUpAt,
    failovers,
    moreFaultsHappened: {
      ...(standby ? { failover_to_standby: failovers.length === o.failoverAt.length && failovers.every((f) => f.recoverySeconds !== null) } : {}),
      console_killed_and_restarted: consoleKills.length > 0 && consoleKills.every((k: ConsoleKill) => k.restartMs !== null),
      timing_edits_of_every_kind:
        kinds((e) => e.change.cron !== undefined) &&
        kinds((e) => e.change.everySeconds !== undefined) &&
        kinds((e) => e.change.timezone !== undefined) &&
        kinds((e) => e.change.enabled === false) &&
        kinds((e) => e.change.enabled === true) &&
        (["skip", "latest", "all"] as const).every((p) => kinds((e) => e.change.catchUp === p)) &&
        kinds((e) => typeof e.change.maxLatenessSeconds === "number") &&
        kinds((e) => e.change.maxLatenessSeconds === null),
      console_connection_cuts: consoleProxy.stats.cutsBeforeCommit + consoleProxy.stats.cutsAfterCommit > 0,
    },
    timed: { ...timed, hogScheduleIds: plan.hog.map((b) => ids.get(b.name)).filter((x): x is number => x !== undefined), queryTimeoutMs: QUERY_TIMEOUT_MS },
  });
  // The console's changes: never half applied, acknowledged ones with their record.
  const whole = await checkWholeChanges(monitor, api.calls);
  Object.assign(report.checks, {
    api_changes_whole: whole.half.length === 0,
    acked_changes_recorded: whole.ackedWithoutRecord.length === 0,
    // Per failover: each kept what had been acknowledged before its kill, each standby was synchronous.
    ...(failovers.length > 0 ? { failover_kept_acks: failovers.every((f) => f.lostAtPromotion.length === 0), standby_was_synchronous: failovers.every((f) => f.syncStateBefore === "sync") } : {}),
  });
  const ok = Object.values(report.checks).every(Boolean);
  const out = {
    ok,
    seed: o.seed,
    run: { short: o.short, workers: o.workers, schedules: schedules.length, minutes: o.minutes, lease_seconds: o.leaseSeconds, poll_interval_ms: o.pollIntervalMs, database: db.restartKind === "pg_ctl" ? "embedded" : "DATABASE_URL", clock_offset_ms: clockOffsetMs, drain_ms: drainMs, total_seconds: 0, logs: o.logDir },
    faults: {
      kill9: faults.faults.filter((f) => f.kind === "kill9").length,
      sigstop_past_lease: faults.faults.filter((f) => f.kind === "sigstop").length,
      churn_restarts: faults.faults.filter((f) => f.kind.startsWith("churn")).length,
      db_crashes: faults.dbRestarts.map((r) => ({ kind: db!.restartKind === "pg_ctl" ? "pg_ctl stop -m immediate" : db!.restartKind, down_ms: r.downMs, took_ms: r.tookMs })),
      skewed_worker_offset_ms: o.skewMs,
      proxy: proxy.stats,
      tickers: o.tickers,
      worker_processes_started: workers.spawned(),
      failovers:
        failovers.length > 0
          ? failovers.map((f) => ({ kind: "pg_ctl stop -m immediate, pg_ctl promote", standby_sync_state: f.syncStateBefore, standby_lag_ms: f.lagMs, changes_during_lag: f.duringLag, promote_ms: f.promoteMs, recovery_seconds: f.recoverySeconds, acked_changes_before: f.ackedBefore, acked_changes_missing_at_promotion: f.lostAtPromotion.length }))
          : { skipped: standby ? "the run ended before the failover was due" : "DATABASE_URL: a server this run does not own has no standby to promote" },
      console_kills: consoleKills.length,
      console: { answer_ms: answerMs(api.calls), kills: consoleKills.map((k: ConsoleKill) => ({ in_flight: k.inFlight, restart_ms: k.restartMs, ...(k.error ? { error: k.error } : {}) })), proxy: consoleProxy.stats },
      silent_connections: timed.silent.reduce((n, e) => n + e.connections, 0),
      silent_episodes: timed.silent.length,
      pool_exhaustions: report.figures.pool_exhaustion?.exhausted ?? 0,
      long_transactions: timed.longTransactions.length,
      clock_steps: timed.clockSteps.map((c) => c.stepMs),
      // Each worker fault with its victim and times, so a failed check can be laid beside them.
      events: faults.faults.map((f) => ({ kind: f.kind, worker: f.workerId, at: new Date(f.at).toISOString(), ...(f.until ? { until: new Date(f.until).toISOString() } : {}), runs_held: f.held.length })),
    },
    failover_recovery_seconds: failovers.length > 0 ? failovers.map((f) => f.recoverySeconds) : null,
    api_changes_half_applied: whole.half.length,
    acked_changes_without_record: whole.ackedWithoutRecord.length,
    ...report.figures,
    checks: report.checks,
    examples: { ...report.examples, half_applied: whole.half.slice(0, 5), acked_without_record: whole.ackedWithoutRecord.slice(0, 5), lost_at_failover: failovers.flatMap((f) => f.lostAtPromotion).slice(0, 5) },
  };
  out.run.total_seconds = Math.round((Date.now() - started) / 1000);
  await dumpHistory(monitor, o.logDir).catch((err) => log(`chaos: could not keep the run history: ${String(err)}`));
  fs.writeFileSync(path.join(o.logDir, "report.json"), JSON.stringify(out, null, 2));
  console.log(JSON.stringify(out, null, 2));
  return ok;
}

if (!seedsMode) void (async () => {
  let ok = false;
  try {
    ok = await main();
  } catch (err) {
    log(`chaos: failed to run: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  } finally {
    await cleanup();
  }
  process.exit(ok ? 0 : 1);
})();
