// The console in the line of fire: the web process (`next start`) reaches PostgreSQL through a
// cutting proxy of its own (same cuts at commit points as the workers', its own budget so the
// workers' cuts cannot use it up) and is killed with kill -9 while API changes are in flight, then
// started again on the same port. What it acknowledged must stay (lost_acks); a change whose
// answer was lost — a cut connection, a killed process — may or may not have applied, but never
// half: each mutation is one transaction with its audit record and its version bump
// (docs/development.md), so the schedule, its audit trail and its version must agree.
import type pg from "pg";
import type { ApiCall, ApiClient } from "./api";
import type { WebServer } from "./web";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One kill -9 of the console. */
export type ConsoleKill = { at: number; inFlight: number; restartMs: number | null; error?: string };

/** The console process, restartable on its port; `web` is always the current one. */
export function superviseConsole(first: WebServer, restart: (port: number) => Promise<WebServer>) {
  const port = Number(new URL(first.baseUrl).port);
  const state = { web: first };
  return {
    get web() {
      return state.web;
    },
    /** kill -9 now, then start it again on the same port; resolves once it is healthy. */
    kill9AndRestart: async (): Promise<number> => {
      const child = state.web.child;
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGKILL");
        await exited;
      }
      const t = Date.now();
      state.web = await restart(port);
      return Date.now() - t;
    },
  };
}

export type ConsoleSupervisor = ReturnType<typeof superviseConsole>;

/**
 * Kill the console at each of the fixed times `at` (this process's clock), each time while three
 * edits are in flight (sent `delayMs` earlier), and restart it.
 */
export async function killConsoleAt(d: {
  console: ConsoleSupervisor;
  api: ApiClient;
  editable: string[];
  at: number[];
  deadline: number;
  delayMs: () => number;
  log: (line: string) => void;
}): Promise<ConsoleKill[]> {
  const kills: ConsoleKill[] = [];
  for (const at of d.at) {
    while (Date.now() < at) await sleep(Math.min(250, at - Date.now()));
    if (Date.now() >= d.deadline) break;
    const edits = d.editable.slice(0, 3).map((name, k) => d.api.edit(name, `before console kill ${kills.length}.${k} ${new Date().toISOString()}`));
    // Each edit reads the version first; kill once a change is on its way.
    for (let i = 0; i < 1000 && d.api.pending.size === 0; i++) await sleep(2);
    await sleep(d.delayMs());
    const kill: ConsoleKill = { at: Date.now(), inFlight: d.api.pending.size, restartMs: null };
    kills.push(kill);
    d.log(`chaos: console kill -9 with ${kill.inFlight} changes in flight`);
    try {
      kill.restartMs = await d.console.kill9AndRestart();
      d.log(`chaos: console back after ${kill.restartMs} ms`);
    } catch (err) {
      kill.error = err instanceof Error ? err.message : String(err);
      d.log(`chaos: console did not come back: ${kill.error}`);
    }
    await Promise.all(edits);
  }
  return kills;
}

/**
 * Changes that applied only in part, and acknowledged changes without their audit record, read
 * after the drain:
 * - every schedule's version is 1 plus its audited updates, pauses and resumes (a change without
 *   its record, or a record without its change, breaks the count);
 * - a created schedule exists exactly when its `schedule.create` record does;
 * - an edit's description was ever current (it is now, or a later update's before names it)
 *   exactly when a `schedule.update` record sets it; acknowledged ones must have it;
 * - an acknowledged re-queue has its `run.requeue` record.
 */
export async function checkWholeChanges(pool: pg.Pool, calls: ApiCall[]) {
  const half: { kind: string; target: string; why: string }[] = [];
  const ackedWithoutRecord: { kind: string; target: string }[] = [];
  const versions = await pool.query<{ name: string; version: number; changes: number }>(
    `SELECT s.name, s.version, (SELECT count(*) FROM audit_log a WHERE a.schedule_id = s.id
       AND a.action IN ('schedule.update', 'schedule.pause', 'schedule.resume'))::int AS changes FROM schedules s`,
  );
  for (const v of versions.rows) if (v.version !== 1 + v.changes) half.push({ kind: "version", target: v.name, why: `version ${v.version}, ${v.changes} audited changes` });

  for (const name of new Set(calls.filter((c) => c.kind === "create").map((c) => c.target))) {
    const r = await pool.query<{ row: boolean; record: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM schedules WHERE name = $1) AS row,
         EXISTS (SELECT 1 FROM audit_log WHERE action = 'schedule.create' AND target_id = $1) AS record`,
      [name],
    );
    const { row, record } = r.rows[0];
    if (row !== record) half.push({ kind: "create", target: name, why: row ? "schedule without its create record" : "create record without the schedule" });
    if (!row && calls.some((c) => c.kind === "create" && c.target === name && c.acked)) ackedWithoutRecord.push({ kind: "create", target: name });
  }

  for (const c of calls.filter((x) => x.kind === "edit")) {
    const description = c.expect!.description!;
    const r = await pool.query<{ seen: boolean; record: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM schedules WHERE name = $1 AND description = $2)
           OR EXISTS (SELECT 1 FROM audit_log WHERE target_id = $1 AND action = 'schedule.update' AND before->>'description' = $2) AS seen,
         EXISTS (SELECT 1 FROM audit_log WHERE target_id = $1 AND action = 'schedule.update' AND after->>'description' = $2) AS record`,
      [c.target, description],
    );
    const { seen, record } = r.rows[0];
    if (seen !== record) half.push({ kind: "edit", target: c.target, why: seen ? `description "${description}" without its update record` : `update record for "${description}" that never showed` });
    if (c.acked && !record) ackedWithoutRecord.push({ kind: "edit", target: c.target });
  }

  const requeued = calls.filter((c) => c.kind === "requeue" && c.acked).map((c) => c.target);
  if (requeued.length > 0) {
    const r = await pool.query<{ target_id: string }>("SELECT DISTINCT target_id FROM audit_log WHERE action = 'run.requeue' AND target_id = ANY($1::text[])", [requeued]);
    const recorded = new Set(r.rows.map((x) => x.target_id));
    for (const t of requeued) if (!recorded.has(t)) ackedWithoutRecord.push({ kind: "requeue", target: t });
  }
  return { half, ackedWithoutRecord };
}
