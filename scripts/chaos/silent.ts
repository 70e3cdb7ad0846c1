// Silent network: every live connection of one worker — its pool connections and its LISTEN
// connection — stops answering without a reset (scripts/chaos/proxy.ts forwards nothing either
// way and keeps both sockets open) for longer than a lease. The worker must notice by its own
// timeouts (SLOTKEEPER_DB_QUERY_TIMEOUT_MS, docs/faults.md) and claim again on fresh connections
// while the episode still lasts. The check reads the attempts: the worker's first start after
// the silence began, against the stated time.
import type pg from "pg";
import type { ClockStep } from "./clock-step";
import type { FaultEvent } from "./faults";
import type { ChaosProxy, SilencedConnection } from "./proxy";
import type { Random } from "./random";
import { isFree, type WorkerPool } from "./workers";

/** One episode, on this process's clock. */
export type SilentEpisode = { workerId: string; at: number; until: number; connections: number; listen: number; closed: SilencedConnection[] };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Silence one busy steady worker for `durationMs`; returns the episode, and the fault event (for takeovers and lease losses). */
export async function silenceWorker(d: { pool: pg.Pool; workers: WorkerPool; proxy: ChaosProxy; random: Random; log: (l: string) => void }, durationMs: number) {
  // A worker the restart loop has just started may not have connected yet: one without pool and
  // LISTEN connections is let go again and another is picked, so the episode silences a working worker.
  const candidates = d.workers.free("normal");
  let victim: (typeof candidates)[number] | undefined;
  let s: ReturnType<ChaosProxy["silence"]> | undefined;
  let held: { runId: number; attempt: number }[] = [];
  let at = 0;
  while (candidates.length > 0) {
    const pick = d.random.pick(candidates);
    candidates.splice(candidates.indexOf(pick), 1);
    if (!isFree(pick)) continue; // another fault took it since the list was read
    pick.taken = true;
    held = await d.pool
      .query<{ id: number; attempts: number }>("SELECT run_id::int AS id, attempts FROM run_queue WHERE state = 'running' AND lease_owner = $1", [pick.id])
      .then((r) => r.rows.map((x) => ({ runId: x.id, attempt: x.attempts })))
      .catch(() => []);
    at = Date.now();
    const tried = d.proxy.silence(pick.id);
    if (tried.connections > 1 && tried.listen > 0) {
      victim = pick;
      s = tried;
      break;
    }
    tried.end();
    pick.taken = false;
    d.log(`chaos: ${pick.id} has not opened its pool and LISTEN connections yet; silencing another worker`);
  }
  if (!victim || !s) return null;
  d.log(`chaos: silencing ${s.connections} connections of ${victim.id} (${s.listen} LISTEN) for ${durationMs} ms`);
  const event: FaultEvent = { kind: "silent", workerId: victim.id, at, held };
  await sleep(durationMs);
  const closed = s.end();
  event.until = Date.now();
  victim.taken = false;
  const episode: SilentEpisode = { workerId: victim.id, at, until: event.until, connections: s.connections, listen: s.listen, closed };
  return { episode, event };
}

/**
 * How much of the real-time window [from, to] nothing new came due because the database clock
 * had been stepped back: after a step back by d, the slots of the d it lives again have run
 * already, so for d of real time only retries and stragglers are due.
 */
export function nothingDueMs(steps: ClockStep[], from: number, to: number): number {
  let ms = 0;
  for (const s of steps) {
    if (s.stepMs >= 0) continue;
    const overlap = Math.min(to, s.at - s.stepMs) - Math.max(from, s.at);
    if (overlap > 0) ms += overlap;
  }
  return ms;
}

/**
 * The checks: on every silenced connection where the worker asked something, it gave the
 * connection up itself within `givenUpMs` of asking (the query timeout, plus slack); and it
 * claimed a run again (its first claim after the silence began, on the server's real clock:
 * chaos_claims) within `boundMs` of the silence's start, plus the time within that bound when a
 * clock step back left nothing due (`nothingDueMs`). `offsetMs` = database minus this process,
 * measured before any clock step, so it also relates this process's clock to the server's real one.
 */
export async function checkSilentEpisodes(pool: pg.Pool, episodes: SilentEpisode[], offsetMs: number, boundMs: number, givenUpMs: number, clockSteps: ClockStep[] = []) {
  const out: {
    worker: string;
    silent_ms: number;
    connections: number;
    listen: number;
    asked: number;
    given_up_by_worker: number;
    longest_unanswered_ms: number | null;
    claimed_again_after_ms: number | null;
    nothing_due_ms: number;
    within_bound: boolean;
  }[] = [];
  for (const e of episodes) {
    const r = await pool.query<{ t: number | null }>(
      "SELECT (extract(epoch FROM min(at)) * 1000)::float8 AS t FROM chaos_claims WHERE worker_id = $1 AND at > to_timestamp($2 / 1000.0)",
      [e.workerId, e.at + offsetMs + 100],
    );
    const t = r.rows[0]?.t ?? null;
    const after = t === null ? null : Math.round(t - (e.at + offsetMs));
    const idle = Math.round(nothingDueMs(clockSteps, e.at, e.at + boundMs));
    // A connection the worker never gave up waited until the episode ended. One first asked less
    // than `givenUpMs` before the end had no time to be given up yet: it is not held to it.
    const asked = e.closed.filter((c) => c.firstUnansweredAt !== null && c.firstUnansweredAt <= e.until - givenUpMs);
    const waits = asked.map((c) => (c.closedByClientAt ?? e.until) - c.firstUnansweredAt!);
    const longest = waits.length ? Math.round(Math.max(...waits)) : null;
    const givenUp = asked.filter((c) => c.closedByClientAt !== null).length;
    out.push({
      worker: e.workerId,
      silent_ms: e.until - e.at,
      connections: e.connections,
      listen: e.listen,
      asked: asked.length,
      given_up_by_worker: givenUp,
      longest_unanswered_ms: longest,
      claimed_again_after_ms: after,
      nothing_due_ms: idle,
      within_bound: after !== null && after <= boundMs + idle && givenUp === asked.length && (longest ?? 0) <= givenUpMs,
    });
  }
  return { bound_ms: boundMs, given_up_within_ms: givenUpMs, episodes: out, over_bound: out.filter((e) => !e.within_bound).length };
}
