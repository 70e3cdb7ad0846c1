// The fault phase: three bounded loops running side by side until the deadline — worker faults
// (kill -9, SIGSTOP past the lease, one database restart), the churn worker's fast restarts, and
// API changes. Every fault is recorded with what the victim held, for recovery times.
import type pg from "pg";
import type { ApiClient } from "./api";
import type { ChaosDatabase } from "./database";
import type { ChaosOptions } from "./options";
import type { ScheduleBody } from "./plan";
import type { Random } from "./random";
import type { WorkerPool, WorkerProc } from "./workers";

/** One worker fault and the runs its victim held at that moment. */
export type FaultEvent = {
  kind: "kill9" | "sigstop" | "churn_kill9" | "churn_sigterm" | "silent";
  workerId: string;
  at: number;
  /** sigstop: when the worker was woken (SIGCONT); silent: when its connections were closed. */
  until?: number;
  held: { runId: number; attempt: number }[];
};

/** What the fault phase did, for the report and the oracle. */
export type FaultLog = {
  faults: FaultEvent[];
  dbRestarts: { at: number; downMs: number; tookMs: number }[];
  /** Pause windows per schedule name: [pause call start, acknowledged resume end or null]. */
  pauses: Map<string, [number, number | null][]>;
  /** Schedules created during the run: name → create call window. */
  created: Map<string, [number, number]>;
};

export type FaultDeps = {
  o: ChaosOptions;
  random: Random;
  pool: pg.Pool;
  workers: WorkerPool;
  db: ChaosDatabase;
  api: ApiClient;
  /** Names to edit and the one schedule that gets paused and resumed. */
  editable: string[];
  pausable: string;
  failSchedule: string;
  laterSchedule: (n: number) => ScheduleBody;
  log: (line: string) => void;
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function heldBy(pool: pg.Pool, workerId: string) {
  const r = await pool.query<{ id: number; attempts: number }>("SELECT run_id::int AS id, attempts FROM run_queue WHERE state = 'running' AND lease_owner = $1", [workerId]);
  return r.rows.map((x) => ({ runId: x.id, attempt: x.attempts }));
}

/** Prefer a victim that holds runs right now, so kills land mid-handler; sample briefly. The victim comes back taken. */
async function pickVictim(d: FaultDeps): Promise<WorkerProc | null> {
  for (let i = 0; i < 10; i++) {
    const free = d.workers.free();
    if (free.length === 0) return null;
    const r = await d.pool.query<{ owner: string; n: number }>(
      "SELECT lease_owner AS owner, count(*)::int AS n FROM run_queue WHERE state = 'running' AND lease_owner = ANY($1) GROUP BY 1 ORDER BY 2 DESC LIMIT 1",
      [free.map((w) => w.id)],
    );
    // Read again after the await: another fault may have taken it meanwhile.
    const busy = d.workers.free().find((w) => w.id === r.rows[0]?.owner);
    if (busy) return ((busy.taken = true), busy);
    await sleep(200);
  }
  const idle = d.workers.free();
  if (idle.length === 0) return null;
  const victim = d.random.pick(idle);
  return ((victim.taken = true), victim);
}

/** kill -9 or SIGSTOP-past-lease one worker, or restart the database once. */
async function workerFaults(d: FaultDeps, deadline: number, out: FaultLog) {
  const leaseMs = d.o.leaseSeconds * 1000;
  const started = Date.now();
  const restartAt = started + (deadline - started) * 0.45;
  let restarted = false;
  for (let i = 0; i < 1000 && Date.now() < deadline - leaseMs - 3000; i++) {
    await sleep(d.random.int(d.o.short ? 5000 : 8000, d.o.short ? 8000 : 20_000));
    if (!restarted && Date.now() >= restartAt) {
      restarted = true;
      // Acknowledged changes right before the restart: these are what lost_acks is about.
      await d.api.edit(d.random.pick(d.editable), `before restart ${new Date().toISOString()}`);
      const t = Date.now();
      d.log(`chaos: crashing PostgreSQL (${d.db.restartKind}, down ${d.o.dbDownMs} ms)`);
      await d.db.restart(d.o.dbDownMs);
      out.dbRestarts.push({ at: t, downMs: d.o.dbDownMs, tookMs: Date.now() - t });
      await sleep(leaseMs + 1000); // let the takeovers the outage caused settle before the next fault
      continue;
    }
    const victim = await pickVictim(d).catch(() => null);
    if (!victim) continue;
    const held = await heldBy(d.pool, victim.id).catch(() => []);
    // Alternate, so even the short run has both kinds; the victim is random (busy ones first).
    if (i % 2 === 0) {
      const at = Date.now();
      await d.workers.kill9(victim);
      out.faults.push({ kind: "kill9", workerId: victim.id, at, held });
      d.workers.start(victim.role);
    } else {
      const at = Date.now();
      d.workers.pause(victim);
      const event: FaultEvent = { kind: "sigstop", workerId: victim.id, at, held };
      out.faults.push(event);
      await sleep(leaseMs + d.o.pollIntervalMs + 1500); // frozen past its lease: others take over
      d.workers.resume(victim);
      victim.taken = false;
      event.until = Date.now();
    }
  }
}

/** Restart the churn worker every churnEveryMs, alternating kill -9 and SIGTERM. */
async function churn(d: FaultDeps, deadline: number, out: FaultLog) {
  for (let i = 0; i < 10_000 && Date.now() < deadline - d.o.churnEveryMs; i++) {
    await sleep(d.o.churnEveryMs);
    for (const w of d.workers.live("churn")) {
      const held = await heldBy(d.pool, w.id).catch(() => []);
      const at = Date.now();
      if (i % 2 === 0) {
        await d.workers.kill9(w);
        out.faults.push({ kind: "churn_kill9", workerId: w.id, at, held });
      } else {
        await d.workers.terminate(w, 5000);
        out.faults.push({ kind: "churn_sigterm", workerId: w.id, at, held });
      }
    }
    d.workers.start("churn");
  }
}

/** Edit, pause, resume, re-queue and create through the real API, one change every few seconds. */
async function apiChanges(d: FaultDeps, deadline: number, out: FaultLog) {
  const steps = ["edit", "pause", "requeue", "edit", "resume", "create"] as const;
  let created = 0;
  for (let i = 0; i < 10_000 && Date.now() < deadline - 8000; i++) {
    await sleep(d.random.int(3000, 6000));
    const step = steps[i % steps.length];
    if (step === "edit") await d.api.edit(d.random.pick(d.editable), `edit ${i} at ${new Date().toISOString()}`);
    else if (step === "pause") {
      const { call } = await d.api.pause(d.pausable);
      const list = out.pauses.get(d.pausable) ?? [];
      list.push([call.startedAt, null]);
      out.pauses.set(d.pausable, list);
    } else if (step === "resume") {
      const { call } = await d.api.resume(d.pausable);
      const open = out.pauses.get(d.pausable)?.at(-1);
      if (open && open[1] === null && call.acked) open[1] = call.endedAt;
    } else if (step === "requeue") {
      const r = await d.pool
        .query<{ id: number; attempts: number; max_attempts: number }>(
          "SELECT r.id::int, r.attempts, r.max_attempts FROM runs r JOIN schedules s ON s.id = r.schedule_id WHERE s.name = $1 AND r.state = 'dead' ORDER BY random() LIMIT 1",
          [d.failSchedule],
        )
        .catch(() => ({ rows: [] }));
      const run = r.rows[0];
      if (run) await d.api.requeue(run.id, run.attempts, run.max_attempts);
    } else if (step === "create" && created < (d.o.short ? 2 : 5)) {
      const body = d.laterSchedule(created++);
      const { call } = await d.api.create(body);
      out.created.set(body.name, [call.startedAt, call.endedAt]);
      if (call.acked) d.editable.push(body.name);
    }
  }
}

/** Run all fault loops until `deadline`; every loop is bounded and returns by itself. */
export async function runFaults(d: FaultDeps, deadline: number): Promise<FaultLog> {
  const out: FaultLog = { faults: [], dbRestarts: [], pauses: new Map(), created: new Map() };
  await Promise.all([workerFaults(d, deadline, out), churn(d, deadline, out), apiChanges(d, deadline, out)]);
  // A pause without an acknowledged resume is resumed now, so the drain sees the schedule live.
  const open = out.pauses.get(d.pausable)?.at(-1);
  if (open && open[1] === null) {
    for (let i = 0; i < 5 && open[1] === null; i++) {
      const { call } = await d.api.resume(d.pausable);
      if (call.acked) open[1] = call.endedAt;
      else await sleep(1000);
    }
  }
  return out;
}
