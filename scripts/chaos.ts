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
import { startChaosDatabase, type ChaosDatabase } from "./chaos/database";
import { runFaults } from "./chaos/faults";
import type { OracleSchedule } from "./chaos/oracle";
import { parseOptions } from "./chaos/options";
import { planSchedules, type ScheduleBody } from "./chaos/plan";
import { startChaosProxy, type ChaosProxy } from "./chaos/proxy";
import { createRandom } from "./chaos/random";
import { buildReport } from "./chaos/report";
import { ensureBuild, startWeb, type WebServer } from "./chaos/web";
import { startWitness, type Witness } from "./chaos/witness";
import { DATABASE_OUTAGE_ALLOWANCE_SECONDS, worstCaseLatenessSeconds } from "../lib/schedules/lateness";
import { createWorkerPool, type WorkerPool } from "./chaos/workers";

const o = parseOptions(process.argv.slice(2));
const random = createRandom(o.seed);
const runTag = `${Date.now().toString(36)}`;
o.logDir = path.resolve(".slotkeeper/chaos", runTag);
fs.mkdirSync(o.logDir, { recursive: true });
const log = (line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let db: ChaosDatabase | undefined;
let proxy: ChaosProxy | undefined;
let web: WebServer | undefined;
let workers: WorkerPool | undefined;
let monitor: pg.Pool | undefined;
let witness: Witness | undefined;
const tickers: ChildProcess[] = [];

// Last resort on any exit path: no worker, ticker or console may outlive the run.
process.on("exit", () => {
  workers?.killAll();
  for (const t of tickers) if (t.exitCode === null) t.kill("SIGKILL");
  if (web?.child.exitCode === null) web.child.kill("SIGKILL");
});
for (const sig of ["SIGINT", "SIGTERM"] as const) process.on(sig, () => void cleanup().finally(() => process.exit(130)));

async function cleanup() {
  proxy?.setCutting(false);
  if (workers) await Promise.all(workers.live().map((w) => (workers!.resume(w), workers!.terminate(w, 3000))));
  for (const t of tickers) if (t.exitCode === null) t.kill("SIGKILL");
  await web?.stop().catch(() => {});
  await proxy?.close().catch(() => {});
  await monitor?.end().catch(() => {});
  await witness?.close().catch(() => {});
  await db?.stop().catch(() => {});
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

async function main() {
  const started = Date.now();
  log(`chaos: seed ${o.seed}, ${o.workers} workers, ${o.schedules} schedules, ${o.minutes} min; logs in ${o.logDir}`);
  await ensureBuild(log);
  db = await startChaosDatabase();
  monitor = new pg.Pool({ connectionString: db.url, max: 3, application_name: "slotkeeper:chaos-monitor" });
  monitor.on("error", () => {});
  // The oracle's times come from this process; the database runs on the same host, and the
  // measured offset is reported so a disagreement would show.
  const t0 = Date.now();
  const dbNow = Number((await monitor.query("SELECT extract(epoch FROM clock_timestamp()) * 1000 AS n")).rows[0].n);
  const clockOffsetMs = Math.round(dbNow - (t0 + Date.now()) / 2);

  proxy = await startChaosProxy({ target: { host: db.host, port: db.port }, random, cutRate: o.cutRate, maxCuts: o.maxCuts });
  const proxiedUrl = (() => {
    const u = new URL(db.url);
    u.port = String(proxy.port);
    return u.toString();
  })();
  web = await startWeb(db.url, path.join(o.logDir, "web.log"));
  const api = createApiClient(web.baseUrl);

  witness = await startWitness();
  const plan = planSchedules(o, runTag, witness.url);
  const created = new Map<string, [number, number]>();
  for (const body of [...plan.ledger, ...plan.heartbeat, ...plan.witnessed, plan.fail]) created.set(body.name, (await createSchedule(api, body)).window);

  const env = {
    SLOTKEEPER_TICK_HORIZON_SECONDS: "10",
    SLOTKEEPER_LEASE_SAFETY_MARGIN_MS: "1000",
    SLOTKEEPER_SHUTDOWN_GRACE_MS: "2000",
    SLOTKEEPER_CONCURRENCY: "10",
    // The witness listens on loopback, which the outbound policy refuses unless opened on purpose.
    SLOTKEEPER_OUTBOUND_ALLOW: "127.0.0.1",
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
  const editable = plan.ledger.slice(1).map((s) => s.name);
  const faults = await runFaults(
    { o, random, pool: monitor, workers, db, api, editable, pausable: plan.ledger[0].name, failSchedule: plan.fail.name, laterSchedule: plan.later, log },
    deadline,
  );

  // Stop the faults, keep a steady set of workers, and let everything up to the cut finish.
  proxy.setCutting(false);
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

  const ids = new Map((await monitor.query<{ id: number; name: string }>("SELECT id::int, name FROM schedules")).rows.map((r) => [r.name, r.id]));
  const all = [...plan.ledger, ...plan.heartbeat, ...plan.witnessed, plan.fail, ...[...faults.created.keys()].map((n, k) => plan.later(k))];
  const windows = new Map([...created, ...faults.created]);
  const schedules: OracleSchedule[] = all
    .filter((b) => ids.has(b.name))
    .map((b) => ({
      id: ids.get(b.name)!,
      name: b.name,
      everySeconds: "everySeconds" in b ? b.everySeconds : undefined,
      cron: "cron" in b ? b.cron : undefined,
      timezone: "timezone" in b ? b.timezone : undefined,
      createdWindow: windows.get(b.name)!.map((t) => t + clockOffsetMs) as [number, number],
      // A slot near a pause may be skipped (reason paused) or left out: optional, never doubled.
      optionalWindows: (faults.pauses.get(b.name) ?? []).map(([a, z]) => [a + clockOffsetMs - 10_000, (z ?? Infinity) + clockOffsetMs + 2000] as [number, number]),
      finalState: b.handler === "fail" ? "dead" : "done",
    }));
  const report = await buildReport({
    pool: monitor,
    schedules,
    cutAt: cutAt + clockOffsetMs,
    faults,
    calls: api.calls,
    leaseMs: o.leaseSeconds * 1000,
    pollMs: o.pollIntervalMs,
    logDir: o.logDir,
    statedBoundMs: worstCaseLatenessSeconds({ jitterSeconds: 0, leaseSeconds: o.leaseSeconds }, o.pollIntervalMs) * 1000,
    outageAllowanceMs: DATABASE_OUTAGE_ALLOWANCE_SECONDS * 1000,
    clockOffsetMs,
    witness: { hits: witness.hits, scheduleIds: plan.witnessed.map((b) => ids.get(b.name)).filter((x): x is number => x !== undefined) },
    heartbeatScheduleIds: plan.heartbeat.map((b) => ids.get(b.name)).filter((x): x is number => x !== undefined),
    proxyCuts: proxy.stats.cutsBeforeCommit + proxy.stats.cutsAfterCommit,
    cutsAfterCommitAt: proxy.cutsAfterCommitAt,
    workersUpAt,
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
    },
    ...report.figures,
    checks: report.checks,
    examples: report.examples,
  };
  out.run.total_seconds = Math.round((Date.now() - started) / 1000);
  fs.writeFileSync(path.join(o.logDir, "report.json"), JSON.stringify(out, null, 2));
  console.log(JSON.stringify(out, null, 2));
  return ok;
}

void (async () => {
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
