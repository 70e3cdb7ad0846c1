// The failover fault: a second local cluster streams from the chaos primary as a SYNCHRONOUS
// standby (synchronous_standby_names on the primary, so a commit is acknowledged only once the
// standby has flushed it). Mid-run the primary is killed (`pg_ctl stop -m immediate`), the standby
// promoted (`pg_ctl promote`), and every proxy retargeted to it, as a virtual IP moves: workers,
// console and monitor keep their URLs. Before the proxies move, nobody but this module can reach
// the new primary, so what it reads there is exactly what survived the failover: every change the
// API acknowledged up to the kill must be in it (`lostAcksAtPromotion`). The recovery time runs
// from the kill to the first run a worker claims on the new primary.
// The standby itself is made by lib/testing/standby.ts (the low-level backup API: the embedded
// binaries have no pg_basebackup).
import pg from "pg";
import type { ApiCall, ApiClient } from "./api";
import type { ChaosDatabase } from "./database";
import type { ChaosProxy } from "./proxy";
import { countLostAcks } from "./report";
import { pgCtlAsync, startStandby as startStreamingStandby, syncState as standbySyncState, withClient } from "../../lib/testing/standby";
import { waitUntil } from "../../lib/testing/wait";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const APP_NAME = "chaos_standby";

/** The standby cluster: where it listens and its folders (pg_ctl promote runs on them). */
export type Standby = { url: string; port: number; pgdata: string; bin: string; stop: () => Promise<void> };

/** A promoted standby as the primary the next standby streams from and the next failover kills. */
export const asPrimary = (s: Standby): Pick<ChaosDatabase, "url" | "cluster"> => ({ url: s.url, cluster: { pgdata: s.pgdata, bin: s.bin } as NonNullable<ChaosDatabase["cluster"]> });

/** What one failover did and found, for the report. */
export type FailoverEvent = {
  /** When the standby started lagging, the fault's start (this process's clock): writes wait from here when it is synchronous. */
  at: number;
  /** When the primary was killed. */
  killedAt: number;
  /** The standby's sync_state on the primary just before the kill ("sync" when synchronous). */
  syncStateBefore: string | null;
  /** How long the primary's WAL sender was frozen before the kill (at most the lag asked for; less when the edits sent meanwhile were all answered). */
  lagMs: number;
  duringLag: { acked: number; unanswered: number };
  /** Kill → the standby accepts writes. */
  promoteMs: number;
  /** Lag start → the first run a worker claimed on the new primary: the outage the workers saw. */
  tookMs: number;
  /** Kill → the first run claimed on the new primary (null: none in time). */
  recoverySeconds: number | null;
  /** Changes the API had acknowledged before the kill, checked on the new primary before anyone else reached it. */
  ackedBefore: number;
  lostAtPromotion: { kind: string; target: string; why: string }[];
};

/** The standby's sync_state on the primary (null when it is not connected). */
const syncState = (primaryUrl: string) => standbySyncState(primaryUrl, APP_NAME);

/**
 * Make a streaming standby of the embedded chaos primary and make it synchronous
 * (`synchronous: false` leaves it asynchronous, to show that the checks see the difference).
 */
export async function startStandby(db: Pick<ChaosDatabase, "url" | "cluster">, opts: { synchronous: boolean; log: (line: string) => void }): Promise<Standby> {
  if (!db.cluster) throw new Error("a standby needs the embedded cluster");
  const standby = await startStreamingStandby({ url: db.url, ...db.cluster }, { appName: APP_NAME, synchronous: opts.synchronous, log: (line) => opts.log(`chaos: ${line}`) });
  return { url: standby.url, port: standby.port, pgdata: standby.pgdata, bin: standby.bin, stop: standby.stop };
}

/** Every change recorded so far, with the unanswered ones as unknown (they may or may not commit). */
function callsSoFar(api: ApiClient): ApiCall[] {
  const unanswered = [...api.pending].map((p): ApiCall => ({ ...p, endedAt: Date.now(), status: 0, acked: false, error: "unanswered at the failover" }));
  return [...api.calls, ...unanswered].sort((a, b) => a.endedAt - b.endedAt);
}

/** The primary's WAL sender process for the standby (null when it is not connected). */
async function walSenderPid(primaryUrl: string): Promise<number | null> {
  return withClient(primaryUrl, async (c) => (await c.query<{ pid: number }>("SELECT pid FROM pg_stat_replication WHERE application_name = $1", [APP_NAME])).rows[0]?.pid ?? null);
}

/** Total attempts ever claimed: a claim raises it by one, nothing lowers it during a run. */
async function attemptsClaimed(url: string): Promise<number> {
  return withClient(url, async (c) => Number((await c.query("SELECT coalesce(sum(attempts), 0)::bigint AS n FROM run_status")).rows[0].n));
}

/**
 * The failover: a few acknowledged edits; the standby made to lag (the primary's WAL sender
 * frozen) while three more edits are sent, so with a synchronous standby they wait in COMMIT and
 * with an asynchronous one they are acknowledged and never shipped; the primary killed (its WAL
 * sender first, so nothing more leaves it), the standby promoted, what the API acknowledged
 * checked on the new primary, and the proxies moved to it; then wait for the first claim there
 * (up to `recoveryTimeoutMs`).
 */
export async function runFailover(d: {
  db: Pick<ChaosDatabase, "url" | "cluster">;
  standby: Standby;
  proxies: ChaosProxy[];
  api: ApiClient;
  editable: string[];
  pick: <T>(items: readonly T[]) => T;
  recoveryTimeoutMs: number;
  lagMs: number;
  log: (line: string) => void;
}): Promise<FailoverEvent> {
  // Changes acknowledged right before the kill: with a synchronous standby they are on it.
  for (let k = 0; k < 3; k++) await d.api.edit(d.pick(d.editable), `before failover ${k} ${new Date().toISOString()}`);
  const syncStateBefore = await syncState(d.db.url).catch(() => null);
  const sender = await walSenderPid(d.db.url).catch(() => null);
  const signal = (sig: NodeJS.Signals) => {
    try {
      if (sender !== null) process.kill(sender, sig);
    } catch {
      // gone already
    }
  };
  const at = Date.now();
  signal("SIGSTOP");
  const lagFrom = d.api.calls.length;
  const lagged = Promise.all([0, 1, 2].map((k) => d.api.edit(d.pick(d.editable), `during standby lag ${k} ${new Date().toISOString()}`)));
  // Synchronous: the edits wait in COMMIT for the standby, so the lag runs its length.
  await Promise.race([lagged, sleep(d.lagMs)]);
  const killedAt = Date.now();
  d.log(`chaos: failover: killing the primary (standby ${syncStateBefore ?? "not streaming"}, lagging ${killedAt - at} ms)`);
  signal("SIGKILL");
  await pgCtlAsync(d.db.cluster!.bin, d.db.cluster!.pgdata, ["stop", "-w", "-t", "60", "-m", "immediate"]);
  const calls = callsSoFar(d.api);
  const duringLag = { acked: d.api.calls.slice(lagFrom).filter((c) => c.acked).length, unanswered: d.api.pending.size };
  await pgCtlAsync(d.standby.bin, d.standby.pgdata, ["promote", "-w", "-t", "60"]);
  // While it promotes, the standby may refuse connections: a failed look is a "not yet".
  const promoted = () => withClient(d.standby.url, async (c) => (await c.query("SELECT NOT pg_is_in_recovery() AS up")).rows[0].up === true).catch(() => false);
  await waitUntil(promoted, 60_000, "the standby's promotion", 200);
  const promoteMs = Date.now() - killedAt;
  // Nobody else can reach the new primary yet: what is here is what the failover kept.
  const check = new pg.Pool({ connectionString: d.standby.url, max: 2 });
  check.on("error", () => {});
  const lostAtPromotion = await countLostAcks(check, calls).finally(() => check.end());
  const before = await attemptsClaimed(d.standby.url);
  for (const p of d.proxies) p.retarget({ host: "127.0.0.1", port: d.standby.port });
  d.log(`chaos: failover: standby promoted in ${promoteMs} ms, proxies moved; ${lostAtPromotion.length} acknowledged changes missing`);
  let tookMs: number | null = null;
  const deadline = killedAt + d.recoveryTimeoutMs;
  while (Date.now() < deadline) {
    if ((await attemptsClaimed(d.standby.url).catch(() => before)) > before) {
      tookMs = Date.now() - killedAt;
      break;
    }
    await sleep(100);
  }
  await lagged;
  d.log(`chaos: failover: first run claimed on the new primary ${tookMs === null ? "never" : `after ${tookMs} ms`}`);
  return {
    at,
    killedAt,
    syncStateBefore,
    lagMs: killedAt - at,
    duringLag,
    promoteMs,
    tookMs: (tookMs ?? Date.now() - killedAt) + killedAt - at,
    recoverySeconds: tookMs === null ? null : Math.round(tookMs / 100) / 10,
    ackedBefore: calls.filter((c) => c.acked).length,
    lostAtPromotion,
  };
}

/**
 * Run the failover once at `at` (this process's clock), after the database crash of the same run
 * has finished (both move the primary; the crash restarts the old one). Returns null when the
 * run ends first.
 */
export async function failoverWhenDue(
  d: Parameters<typeof runFailover>[0] & { at: number; deadline: number; crashes: () => CrashState; settleMs: number },
): Promise<FailoverEvent | null> {
  while (Date.now() < d.deadline) {
    const crash = d.crashes();
    if (Date.now() >= d.at && crash.done > 0 && !crash.running && Date.now() >= crash.lastEndedAt + d.settleMs) break;
    await sleep(250);
  }
  if (Date.now() >= d.deadline) return null;
  return runFailover(d);
}

/**
 * Several failovers in one run, one at each of `at` (this process's clock): after each, a new
 * synchronous standby is made from the new primary, so the next failover has one (`standbys`
 * collects every cluster made, for the cleanup). Each failover is checked on its own; the first
 * waits for the crash as above, each later one for the previous one's takeovers to settle.
 */
export async function failoversWhenDue(
  d: Omit<Parameters<typeof failoverWhenDue>[0], "at" | "db" | "standby"> & { at: number[]; db: ChaosDatabase; standbys: Standby[] },
): Promise<FailoverEvent[]> {
  const events: FailoverEvent[] = [];
  let primary: Pick<ChaosDatabase, "url" | "cluster"> = d.db;
  for (let k = 0; k < d.at.length; k++) {
    let standby = d.standbys[k];
    if (!standby) {
      try {
        standby = await startStandby(primary, { synchronous: true, log: d.log });
      } catch (err) {
        d.log(`chaos: failover ${k + 1}: no new standby (${err instanceof Error ? err.message : String(err)})`);
        break;
      }
      d.standbys.push(standby);
    }
    const event = await failoverWhenDue({ ...d, db: primary, standby, at: Math.max(d.at[k], (events.at(-1)?.killedAt ?? 0) + d.settleMs) });
    if (!event) break;
    events.push(event);
    primary = asPrimary(standby);
  }
  return events;
}

export type CrashState = { done: number; running: boolean; lastEndedAt: number };

/** Wrap the database's crash so the failover can wait for it: finished crashes, whether one is under way, when the last ended. */
export function watchCrashes(db: ChaosDatabase): () => CrashState {
  const state: CrashState = { done: 0, running: false, lastEndedAt: 0 };
  const restart = db.restart;
  db.restart = async (downMs) => {
    state.running = true;
    try {
      await restart(downMs);
    } finally {
      state.running = false;
      state.done++;
      state.lastEndedAt = Date.now();
    }
  };
  return () => ({ ...state });
}
