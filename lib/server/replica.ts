import "server-only";
import { AsyncLocalStorage } from "node:async_hooks";
import { sql } from "drizzle-orm";
import { configDefaults } from "../config";
import type { Db } from "../db/client";
import { getDb, getLog, getReplicaDb, onCloseDb } from "./db";

// Reads from a streaming standby (DATABASE_READ_URL). Read-only routes opt in (`route(fn, { reads:
// "replica" })`, lib/server/route.ts) and read through getReadDb(); everything else — every
// mutation, the reads a mutation answers with, sign-in, session and token checks — uses getDb(),
// the primary. A standby that cannot be reached, is not in recovery (promoted, or not a standby at
// all), or fails a statement for a reason of its own sends the read to the primary instead, and
// the answer says so in its headers.
//
// Lag. `now() - pg_last_xact_replay_timestamp()` alone overstates it whenever the primary was idle
// (it is the age of the last commit replayed, however old that commit is), so the lag here is what
// this process saw: every probe notes the primary's WAL position and when it was first seen; the
// lag is the age of the oldest position seen that the standby has not replayed yet (0 when it has
// replayed everything the primary had written), never more than the age of its last replayed
// commit. A probe runs every second while a standby is configured.
//
// The database clock: sk_now() on the standby reads the replicated sk_clock row, so a moved or
// frozen clock reads the same there once replayed; now() is the standby's own, which NTP keeps with
// the primary's. With replay behind, the standby answers as of what it replayed, clock row included.

/** Where the response's data was read: replica, or primary (no standby, or the standby failed). */
export const READ_FROM_HEADER = "x-slotkeeper-read-from";
/** The standby's replay lag in seconds, on answers read there. */
export const REPLICA_LAG_HEADER = "x-slotkeeper-replica-lag-seconds";
/** Why a read meant for the standby went to the primary. */
export const READ_FALLBACK_HEADER = "x-slotkeeper-read-fallback";

/**
 * Read-your-writes for the console: every change answered while a standby is configured sets this
 * cookie to the primary's WAL position after it, and a read that brings it goes to the primary
 * until the standby has replayed that far. Forging it only moves reads to the primary.
 */
export const WROTE_COOKIE = "sk_wrote_lsn";
const WROTE_MAX_AGE_SECONDS = 600;

const PROBE_INTERVAL_MS = 1000;
/** Positions kept for the lag estimate: a probe a second, so about ten minutes. */
const MAX_SAMPLES = 600;

export type ReplicaStatus = {
  /** DATABASE_READ_URL is set. */
  configured: boolean;
  /** Where read-only routes read now. */
  readsFrom: "replica" | "primary";
  /** streaming: in recovery and answering; not_standby: answering but not in recovery; unreachable: not answering; off: not configured. */
  state: "streaming" | "not_standby" | "unreachable" | "off";
  /** Seconds the standby's data is behind the primary's (null: unknown). */
  lagSeconds: number | null;
  /** Bytes of WAL the primary has written that the standby has not replayed (null: unknown). */
  lagBytes: number | null;
  /** pg_is_wal_replay_paused() on the standby. */
  replayPaused: boolean | null;
  /** Lag above SLOTKEEPER_REPLICA_LAG_WARN_SECONDS, or reads sent to the primary although a standby is configured. */
  warn: boolean;
  lagWarnSeconds: number;
  /** Why reads go to the primary, when a standby is configured. */
  reason?: string;
  checkedAt: string;
};

type Sample = { lsnBytes: number; at: number };
type State = {
  status: ReplicaStatus | null;
  samples: Sample[];
  inflight: Promise<ReplicaStatus> | null;
  timer?: NodeJS.Timeout;
  checkedAtMs: number;
  /** The standby's replay position at the last probe that reached it. */
  replayedBytes?: number;
};
const g = globalThis as { __slotkeeperReplica?: State };
const state = (): State => (g.__slotkeeperReplica ??= { status: null, samples: [], inflight: null, checkedAtMs: 0 });

/** SLOTKEEPER_REPLICA_LAG_WARN_SECONDS (lib/config.ts validates it at start). */
function lagWarnSeconds(): number {
  const raw = process.env.SLOTKEEPER_REPLICA_LAG_WARN_SECONDS;
  const v = Number(raw);
  return raw && Number.isFinite(v) && v >= 0 ? v : configDefaults.replicaLagWarnSeconds;
}

/** An LSN (`16/B374D848`) as a byte position. Exact below 2^53 bytes (8 PiB of WAL). */
const lsnBytes = (lsn: string): number => {
  const [hi, lo] = lsn.split("/");
  return Number.parseInt(hi, 16) * 2 ** 32 + Number.parseInt(lo, 16);
};

/** The error in full, for the log. */
const describe = (err: unknown): string => {
  const e = rootCause(err) as { code?: string; message?: string };
  return (e?.code ? `${e.code}: ` : "") + (e?.message ?? String(err)).split("\n")[0];
};

/**
 * The error as /api/health (which answers anyone) and the console may show it: its code, or a
 * message that names no address. The log has the whole error.
 */
const briefly = (err: unknown): string => {
  const e = rootCause(err) as { code?: string; message?: string };
  if (e?.code) return e.code;
  const message = (e?.message ?? "").split("\n")[0];
  return /\d+\.\d+\.\d+\.\d+|@|:\d{2,5}\b/.test(message) ? "connection failed" : message.slice(0, 120) || "connection failed";
};

function rootCause(err: unknown): unknown {
  let e = err;
  for (let i = 0; i < 5 && e && typeof e === "object" && "cause" in e && (e as { cause?: unknown }).cause; i++) e = (e as { cause: unknown }).cause;
  return e;
}

const unreachable = (reason: string, warnAt: number): ReplicaStatus => ({
  configured: true,
  readsFrom: "primary",
  state: "unreachable",
  lagSeconds: null,
  lagBytes: null,
  replayPaused: null,
  warn: true,
  lagWarnSeconds: warnAt,
  reason: `the standby (DATABASE_READ_URL) does not answer (${reason}); reads go to the primary`,
  checkedAt: new Date().toISOString(),
});

/** One look at both servers: the primary's WAL position, then how far the standby has replayed. */
async function probe(replica: Db): Promise<ReplicaStatus> {
  const s = state();
  const warnAt = lagWarnSeconds();
  let primaryLsn: number | null = null;
  try {
    const p = await getDb().execute<{ lsn: string }>(sql`SELECT pg_current_wal_lsn()::text AS lsn`);
    primaryLsn = lsnBytes(p.rows[0].lsn);
    const now = Date.now();
    const last = s.samples.at(-1);
    if (!last || primaryLsn > last.lsnBytes) s.samples.push({ lsnBytes: primaryLsn, at: now });
    if (s.samples.length > MAX_SAMPLES) s.samples.splice(0, s.samples.length - MAX_SAMPLES);
  } catch {
    // The primary is down: the standby's own figures are all there is.
  }
  let row: { recovery: boolean; replay: string | null; paused: boolean | null; since: number | string | null };
  try {
    const r = await replica.execute<typeof row>(sql`
      SELECT pg_is_in_recovery() AS recovery,
             pg_last_wal_replay_lsn()::text AS replay,
             CASE WHEN pg_is_in_recovery() THEN pg_is_wal_replay_paused() END AS paused,
             extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp())::float8 AS since`);
    row = r.rows[0];
  } catch (err) {
    if (s.status?.state !== "unreachable") getLog().warn({ event: "replica:unreachable", err: describe(err) });
    return unreachable(briefly(err), warnAt);
  }
  const checkedAt = new Date().toISOString();
  if (!row.recovery || row.replay === null) {
    return {
      configured: true,
      readsFrom: "primary",
      state: "not_standby",
      lagSeconds: null,
      lagBytes: null,
      replayPaused: null,
      warn: true,
      lagWarnSeconds: warnAt,
      reason: "the server at DATABASE_READ_URL is not in recovery (promoted, or not a standby), so its data may not follow the primary's; reads go to the primary",
      checkedAt,
    };
  }
  const replayed = lsnBytes(row.replay);
  s.replayedBytes = replayed;
  // Positions the standby has replayed no longer matter; the oldest one left dates the lag.
  while (s.samples.length > 1 && s.samples[1].lsnBytes <= replayed) s.samples.shift();
  let lagSeconds: number | null;
  let lagBytes: number | null = null;
  if (primaryLsn === null) {
    lagSeconds = row.since === null ? null : Number(row.since);
  } else {
    lagBytes = Math.max(0, primaryLsn - replayed);
    const oldestAhead = s.samples.find((x) => x.lsnBytes > replayed);
    const seen = oldestAhead ? (Date.now() - oldestAhead.at) / 1000 : 0;
    lagSeconds = lagBytes === 0 ? 0 : row.since === null ? seen : Math.min(seen, Number(row.since));
  }
  if (lagSeconds !== null) lagSeconds = Math.round(lagSeconds * 1000) / 1000;
  return {
    configured: true,
    readsFrom: "replica",
    state: "streaming",
    lagSeconds,
    lagBytes,
    replayPaused: row.paused,
    warn: lagSeconds === null ? lagBytes !== 0 : lagSeconds > warnAt,
    lagWarnSeconds: warnAt,
    checkedAt,
  };
}

const OFF: Omit<ReplicaStatus, "checkedAt" | "lagWarnSeconds"> = { configured: false, readsFrom: "primary", state: "off", lagSeconds: null, lagBytes: null, replayPaused: null, warn: false };

/** Probe now (sharing a probe already under way) and remember the answer. */
function refresh(replica: Db): Promise<ReplicaStatus> {
  const s = state();
  s.inflight ??= probe(replica)
    .then((status) => {
      const before = s.status;
      if (before && before.readsFrom !== status.readsFrom) {
        getLog()[status.readsFrom === "primary" ? "warn" : "info"]({ event: "replica:reads", readsFrom: status.readsFrom, reason: status.reason });
      }
      s.status = status;
      s.checkedAtMs = Date.now();
      return status;
    })
    .finally(() => {
      s.inflight = null;
    });
  return s.inflight;
}

function startProbing(replica: Db) {
  const s = state();
  if (s.timer) return;
  s.timer = setInterval(() => void refresh(replica).catch(() => {}), PROBE_INTERVAL_MS);
  s.timer.unref();
  onCloseDb(() => {
    clearInterval(s.timer);
    g.__slotkeeperReplica = undefined;
  });
}

/**
 * The standby's state as of the last probe (at most a second old), probing first when there is
 * none yet or `fresh` asks for one.
 */
export async function replicaStatus(opts: { fresh?: boolean } = {}): Promise<ReplicaStatus> {
  const replica = getReplicaDb();
  if (!replica) return { ...OFF, lagWarnSeconds: lagWarnSeconds(), checkedAt: new Date().toISOString() };
  startProbing(replica);
  const s = state();
  if (!opts.fresh && s.status && Date.now() - s.checkedAtMs < PROBE_INTERVAL_MS * 2) return s.status;
  return refresh(replica);
}

type ReadContext = { db: Db; from: "replica" | "primary"; fallback?: string; lagSeconds?: number | null };
const reads = new AsyncLocalStorage<ReadContext>();

/**
 * The database a read-only route reads from: the standby inside `readFromReplica`, while it
 * answers; the primary everywhere else.
 */
export function getReadDb(): Db {
  return reads.getStore()?.db ?? getDb();
}

/** Errors that are the standby's, not the statement's: the same read on the primary may well succeed. */
export function isReplicaFailure(err: unknown): boolean {
  const e = rootCause(err) as { code?: string; message?: string };
  const code = e?.code ?? "";
  if (["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENOTFOUND", "EAI_AGAIN", "EPIPE"].includes(code)) return true;
  // 08: connection exceptions; 57P01-03: shut down or starting; 25006: a write on a read-only
  // server (a read path that writes: it belongs on the primary); 40001 from a standby: cancelled
  // by a conflict with recovery.
  if (code.startsWith("08") || ["57P01", "57P02", "57P03", "25006", "40001"].includes(code)) return true;
  const message = e?.message ?? "";
  return /Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error/.test(message);
}

function label(res: Response, ctx: ReadContext): Response {
  try {
    res.headers.set(READ_FROM_HEADER, ctx.from);
    if (ctx.from === "replica" && ctx.lagSeconds !== undefined && ctx.lagSeconds !== null) res.headers.set(REPLICA_LAG_HEADER, String(ctx.lagSeconds));
    if (ctx.fallback) res.headers.set(READ_FALLBACK_HEADER, ctx.fallback.replace(/[\r\n]+/g, " ").slice(0, 300));
  } catch {
    // Immutable headers: the answer stands without them.
  }
  return res;
}

/**
 * Run a read-only route's handler with getReadDb() on the standby (when one is configured and
 * answering). A failure that is the standby's runs the handler again on the primary: these
 * handlers only read, so running one twice is harmless.
 */
export async function readFromReplica(req: Request, run: () => Promise<Response>): Promise<Response> {
  const replica = getReplicaDb();
  if (!replica) return run();
  const status = await replicaStatus();
  if (status.readsFrom === "primary") {
    const ctx: ReadContext = { db: getDb(), from: "primary", fallback: status.reason };
    return label(await reads.run(ctx, run), ctx);
  }
  const wrote = wroteLsn(req);
  const replayed = state().replayedBytes;
  if (wrote !== null && (replayed === undefined || replayed < wrote)) {
    const ctx: ReadContext = { db: getDb(), from: "primary", fallback: "the standby has not replayed your last change yet; read from the primary" };
    return label(await reads.run(ctx, run), ctx);
  }
  const ctx: ReadContext = { db: replica, from: "replica", lagSeconds: status.lagSeconds };
  try {
    return label(await reads.run(ctx, run), ctx);
  } catch (err) {
    if (!isReplicaFailure(err)) throw err;
    getLog().warn({ event: "replica:read-failed", err: describe(err) });
    // Probe again soon rather than trusting the last answer for the next reads.
    void refresh(replica).catch(() => {});
    const again: ReadContext = { db: getDb(), from: "primary", fallback: `the standby failed this read (${briefly(err)}); read from the primary` };
    return label(await reads.run(again, run), again);
  }
}

/** The WAL position of the caller's last change (the cookie), or null. */
function wroteLsn(req: Request): number | null {
  const m = new RegExp(`(?:^|;\\s*)${WROTE_COOKIE}=([0-9A-Fa-f]{1,8}/[0-9A-Fa-f]{1,8})(?:;|$)`).exec(req.headers.get("cookie") ?? "");
  return m ? lsnBytes(m[1]) : null;
}

/**
 * After a change: when a standby is configured, note the primary's WAL position in the caller's
 * cookie, so their next reads see the change (readFromReplica). Nothing without a standby.
 */
export async function markWrite(res: Response): Promise<Response> {
  if (!getReplicaDb()) return res;
  try {
    const r = await getDb().execute<{ lsn: string }>(sql`SELECT pg_current_wal_lsn()::text AS lsn`);
    res.headers.append("set-cookie", `${WROTE_COOKIE}=${r.rows[0].lsn}; Path=/; Max-Age=${WROTE_MAX_AGE_SECONDS}; HttpOnly; SameSite=Lax`);
  } catch {
    // Immutable headers, or the primary went away after the change: the change stands; reads may lag.
  }
  return res;
}
