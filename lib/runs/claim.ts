import { sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/client";
import { intArray, prepare, runPrepared } from "../db/prepared";
import { jsonMayReferToEnv } from "../security/mask";
import type { RetryPolicy } from "./backoff";

/** A run this worker now holds: everything needed to call its handler and to fence its writes. */
export type ClaimedRun = {
  id: number;
  scheduleId: number;
  scheduleName: string;
  handler: string;
  payload: unknown;
  scheduledFor: Date;
  /** The fencing token: the run's attempts after this claim. Every later write names it. */
  attempt: number;
  leaseSeconds: number;
  origin: "schedule" | "catch_up" | "manual" | "backfill";
  retry: RetryPolicy;
  maxAttempts: number;
  /**
   * False when the payload certainly holds no `{ "$env": NAME }` reference (its JSON text names no
   * "$env"), so the worker may leave it unparsed until the handler reads it; otherwise the worker
   * resolves it before calling the handler, and an unset variable fails the attempt.
   */
  payloadRefersToEnv?: boolean;
  /**
   * Where the run's queue row is now (its ctid, as text): the finish deletes it from there without
   * an index look-up. A heartbeat moves it (and says where to); anything else that moves it changes
   * the token too, or the finish falls back to the index.
   */
  queueTid: string;
};

/** What one claim statement did to a row: only `running` rows are handed to handlers. */
export type ClaimOutcome = { id: number; state: "running" | "skipped" | "dead" };

export type ClaimOptions = {
  workerId: string;
  partitions: number[] | null;
  limit: number;
  /**
   * Also look for running runs whose lease expired (default true). The look reads every running
   * run, a thousand or more during a spike, so a worker claiming many times a second does it once
   * per poll interval, not on every claim (the runner decides), which keeps recovery within
   * lease + poll interval.
   */
  rescueExpired?: boolean;
  /**
   * Look only if no worker has looked in the last this many ms (the cluster's stamp): with W
   * workers, one walk of the running runs per interval instead of W. Without it, always look.
   */
  rescueGateMs?: number;
  /**
   * Also claim runs of schedules whose overlap policy is forbid or skip (default true). Their claim
   * checks each run's predecessors, in a statement of its own over a small index; when there were
   * none at the last look, a worker claiming many times a second asks once per poll interval.
   */
  checkExclusive?: boolean;
};

/**
 * What a claim statement answers: its runs grouped by the settings they share, each group one row
 * (see CLAIMED). A group at the top of the hour holds most of a batch.
 */
type Group = {
  state: ClaimOutcome["state"];
  handler: string | null;
  /** The payload's JSON text: parsed once per run. */
  payload: string | null;
  lease_seconds: number | null;
  origin: ClaimedRun["origin"] | null;
  retry_max_attempts: number | null;
  retry_base_seconds: number | null;
  retry_cap_seconds: number | null;
  max_attempts: number | null;
  /** JSON: [id, schedule_id, scheduled_for_ms, attempts] per run, one flat array (settled runs: [id] each). */
  numbers: string;
  /** The runs' queue row tids, "(page,item)", joined by ";" (null for settled runs). */
  tids: string | null;
  /** The runs' schedule names, a JSON array in the order of `numbers` (parsed when one is read). */
  names: string;
};

/**
 * Claim up to `limit` due runs: running runs whose lease expired, then pending runs whose run_after
 * has passed, skipping rows other workers hold (FOR UPDATE SKIP LOCKED on run_queue, the live part
 * of unfinished runs). Returns only the runs this worker must now execute; overlap skips and
 * final-attempt expiries are settled on the way (see `claimRunsDetailed`).
 */
export async function claimRuns(db: Db, opts: ClaimOptions): Promise<ClaimedRun[]> {
  const { claimed } = await claimRunsDetailed(db, opts);
  return claimed;
}

/** Where the next multi-partition claim starts, so every held partition gets its turn at the head. */
let rotation = 0;

type Claimed = { claimed: ClaimedRun[]; settled: ClaimOutcome[]; exclusiveFound: number };

/**
 * `claimRuns`, also reporting the rows it skipped (overlap) or sent dead (lease expired on the final
 * attempt), and how many runs of exclusive schedules it found (the runner's cue to keep asking).
 *
 * Up to three kinds of statement, each small, in this order:
 * 1. expired leases, in every partition (when `rescueExpired`);
 * 2. due runs of exclusive schedules (overlap forbid or skip) in the held partitions, with their
 *    overlap checks (when `checkExclusive`);
 * 3. the common case: due runs of the other schedules, one partition per statement, rotating the
 *    starting one, until the limit is reached. Why per partition: `partition = $1 … ORDER BY
 *    run_after LIMIT n` walks the (partition, run_after) index in order and stops after n rows
 *    (1.6 ms for 500 of 400,000 due rows, measured with scripts/bench/explain.ts), while
 *    `partition = ANY($parts)` cannot return index order on PostgreSQL 15: it read and sorted all
 *    200,000 due rows of 8 partitions (225 ms).
 * Splitting them keeps the statement of the top of the hour to what it must do: lock and rewrite
 * the queue row. With the expiry and overlap machinery in the same
 * statement the claim took 37.6 µs of statement time per run; without, about 22 (pg_stat_statements
 * over a 200,000-run drain by four connections; see the README's Scaling section).
 */
export async function claimRunsDetailed(db: Db, opts: ClaimOptions): Promise<Claimed> {
  const out: Claimed = { claimed: [], settled: [], exclusiveFound: 0 };
  if (opts.limit <= 0) return out;
  const left = () => opts.limit - out.claimed.length - out.settled.length;
  const take = (r: { claimed: ClaimedRun[]; settled: ClaimOutcome[] }) => {
    out.claimed.push(...r.claimed);
    out.settled.push(...r.settled);
  };
  // Holding no partition (yet, or any more) must still rescue expired leases: recovery stays within
  // lease + poll interval and never waits for a dead worker's partition leases to change hands.
  if (opts.rescueExpired !== false) take(await rescueExpired(db, opts.workerId, opts.limit, opts.rescueGateMs));
  const parts = opts.partitions;
  if (parts !== null && parts.length === 0) return out;
  if (opts.checkExclusive !== false && left() > 0) {
    const r = await claimExclusive(db, opts.workerId, parts, left());
    out.exclusiveFound = r.claimed.length + r.settled.length;
    take(r);
  }
  if (parts === null) {
    if (left() > 0) take(await claimPlain(db, opts.workerId, null, left()));
    return out;
  }
  const start = rotation++ % parts.length;
  for (let i = 0; i < parts.length && left() > 0; i++) take(await claimPlain(db, opts.workerId, parts[(start + i) % parts.length], left()));
  return out;
}

// What every claim statement's UPDATE returns for a run it now holds: the queue row as updated,
// which carries the schedule's settings (copied when the run was queued, rewritten by edits; the
// handler, payload and retry policy as the number of their run_settings row), so no schedule is read.
const RETURNING = sql`q.run_id, q.schedule_id, q.scheduled_for, q.attempts, q.ctid AS tid, q.schedule_name,
  q.settings_id, q.lease_seconds, q.origin, q.max_attempts, q.state`;

/**
 * How every claim statement answers (over its CTE `claimed`, RETURNING's columns): one row per
 * group of runs that share their settings, with the runs' own numbers in one JSON array, their
 * queue rows' tids in one string and their schedule names in one JSON array, and the group's
 * handler, payload and retry policy read once from run_settings. Why not a row per run: the
 * driver turns every column of every row into a string of its own, then parses it, and a claimed
 * run is a dozen columns. Measured on 500-run batches (node and backend CPU time, one connection):
 * 8.0 µs of worker and 3.6 µs of database CPU per run as rows, 1.9 and 4.2 in groups. At the top
 * of the hour a batch is one group; schedules with settings of their own make groups of one, no
 * worse than a row each. The aggregates advance on each input row in turn, so the i-th entry of
 * each belongs to the same run.
 */
const CLAIMED = sql`
    SELECT g.state, s.handler, s.payload::text AS payload, g.lease_seconds, g.origin,
      s.retry_max_attempts, s.retry_base_seconds, s.retry_cap_seconds, g.max_attempts, g.numbers, g.tids, g.names
    FROM (
      SELECT c.state, c.settings_id, c.lease_seconds, c.origin, c.max_attempts,
        -- [id, schedule id, slot in epoch milliseconds, attempts] per run, flat: one JSON.parse and
        -- no strings. A skipped run has only its id (concat_ws leaves out NULLs), and no tid. The
        -- slot in whole milliseconds, truncated as a JS Date would: date_part is a float8, exact to
        -- ±0.25 µs for this century's instants, and the 0.5 µs added keeps a whole millisecond from
        -- flooring to the one before it while no microsecond count (≤ 999 µs past it) reaches the
        -- next. extract(epoch …), exact, is numeric arithmetic: 0.4 µs more per run.
        '[' || string_agg(concat_ws(',', c.run_id, c.schedule_id, floor(date_part('epoch', c.scheduled_for) * 1000 + 0.0005)::bigint, c.attempts), ',') || ']' AS numbers,
        string_agg(c.tid::text, ';') AS tids,
        json_agg(c.schedule_name)::text AS names
      FROM claimed c
      GROUP BY c.state, c.settings_id, c.lease_seconds, c.origin, c.max_attempts
    ) g
    -- A primary-key probe per group, whatever the planner knows of run_settings: LIMIT keeps the
    -- subquery from being flattened into a join, which a plan made while run_settings looked
    -- empty ran as a scan of the whole table (a table as long as there are distinct payloads).
    -- Settled runs (skipped, dead) have no settings in their group.
    LEFT JOIN LATERAL (SELECT * FROM run_settings s WHERE s.id = g.settings_id LIMIT 1) s ON true`;

/**
 * What a claim writes on the queue row it takes (q), in the plain and the overlap-checked claim
 * alike. Fencing: the token rises on every claim, so the previous holder's writes match no row.
 * The clock is read through (SELECT now FROM clock), an InitPlan evaluated once per statement, not
 * by joining the clock CTE: a join is a nested loop over the claimed rows that also carries the
 * clock's whole row along with each of them (for the recheck of a concurrently updated row).
 */
const TAKE_LEASE = sql`
  state = 'running',
  attempts = q.attempts + 1,
  lease_owner = ${sql.placeholder("workerId")},
  lease_expires_at = (SELECT now FROM clock) + make_interval(secs => q.lease_seconds),
  started_at = (SELECT now FROM clock),
  run_after = (SELECT now FROM clock) + make_interval(secs => q.lease_seconds)`;

/**
 * The claim of the top of the hour: due pending runs of one partition (or all, with null) whose
 * schedule allows overlap, locked in due order and turned into running queue rows (token + 1,
 * lease). One row rewritten with one index entry (run_queue_running_idx), and nothing else read:
 * neither the runs row (written when the attempt ends) nor the schedule (its settings are on the
 * queue row).
 *
 * One clock: every due comparison reads sk_now(), never the worker's clock. It is read once, in
 * the clock CTE: sk_now() is a SQL function PostgreSQL cannot inline, and each (SELECT sk_now())
 * is an InitPlan of its own.
 */
const claimPlainIn = (inPartition: SQL, opts?: { scanAllowed: string }) =>
  prepare("sk_claim", sql`
    WITH clock AS (SELECT sk_now() AS now),
    due AS (
      SELECT q.ctid FROM run_queue q
      WHERE q.state = 'pending' AND q.overlap = 'allow' AND q.run_after <= (SELECT now FROM clock) ${inPartition}
      ORDER BY q.run_after
      LIMIT ${sql.placeholder("limit")}
      FOR UPDATE SKIP LOCKED
    ),
    claimed AS (
      UPDATE run_queue q SET ${TAKE_LEASE}
      -- ctid = ANY(ARRAY(…)) fetches the locked rows where the lock found them (a TID scan, no index
      -- descent: locked rows cannot move). With a join on the CTE the planner guessed ~100 rows and
      -- seq-scanned the table.
      WHERE q.ctid = ANY(ARRAY(SELECT ctid FROM due))
      RETURNING ${RETURNING}
    )
    ${CLAIMED}`, opts);
const CLAIM_IN_PARTITION = claimPlainIn(sql`AND q.partition = ${sql.placeholder("partition")}::int`);
// Due order across every partition cannot come from the (partition, run_after) index: this one
// reads and sorts the due rows. Only tests and tools claim without partitions; a worker always
// claims in the partitions it holds.
const CLAIM_ANYWHERE = claimPlainIn(sql``, { scanAllowed: "claims without partitions (tests and tools); a worker always names its partitions" });

async function claimPlain(db: Db, workerId: string, partition: number | null, limit: number): Promise<Claimed> {
  const result =
    partition === null
      ? await runPrepared<Group>(db, CLAIM_ANYWHERE, { workerId, limit })
      : await runPrepared<Group>(db, CLAIM_IN_PARTITION, { workerId, limit, partition });
  return toClaimed(result.rows);
}

/**
 * Due runs of schedules whose overlap policy is forbid or skip (run_queue_exclusive_idx, the policy
 * copied on the queue row), each
 * checked against the schedule's earlier unfinished runs. 'forbid' waits while any earlier run is
 * unfinished (pending, waiting on retry backoff, or running). 'skip' skips the run when an earlier
 * one is running or waiting on retry, and otherwise waits only for an earlier run that has not
 * started yet (so a backlog runs one at a time, never side by side).
 */
const claimExclusiveIn = (partitioned: boolean) => {
  // One partition at a time through the index (LATERAL), as the plain claim, stopping at the limit.
  const candidates = (where: SQL) => sql`
    SELECT q.ctid, busy.any AS overlapped, q.run_after
    FROM run_queue q
    CROSS JOIN LATERAL (
      -- Each EXISTS matches one partial index (run_queue_running_idx, run_queue_pending_idx).
      SELECT q.overlap = 'skip' AND (
        EXISTS (SELECT 1 FROM run_queue p WHERE p.schedule_id = q.schedule_id AND p.scheduled_for < q.scheduled_for AND p.state = 'running')
        OR EXISTS (SELECT 1 FROM run_queue p WHERE p.schedule_id = q.schedule_id AND p.scheduled_for < q.scheduled_for AND p.state = 'pending' AND p.attempts > 0)
      ) AS any
    ) busy
    WHERE q.state = 'pending' AND q.overlap <> 'allow' AND q.run_after <= (SELECT now FROM clock) ${where}
      AND (busy.any
        OR (NOT EXISTS (SELECT 1 FROM run_queue p WHERE p.schedule_id = q.schedule_id AND p.scheduled_for < q.scheduled_for AND p.state = 'pending')
          AND NOT EXISTS (SELECT 1 FROM run_queue p WHERE p.schedule_id = q.schedule_id AND p.scheduled_for < q.scheduled_for AND p.state = 'running')))
    ORDER BY q.run_after
    LIMIT ${sql.placeholder("limit")}
    FOR UPDATE OF q SKIP LOCKED`;
  const due = partitioned
    ? sql`SELECT x.* FROM unnest(${sql.placeholder("partitions")}::int[]) AS p(partition)
          CROSS JOIN LATERAL (${candidates(sql`AND q.partition = p.partition`)}) x
          LIMIT ${sql.placeholder("limit")}`
    : candidates(sql``);
  return prepare("sk_claim_exclusive", sql`
    WITH clock AS (SELECT sk_now() AS now),
    due AS (${due}),
    skipped AS (
      DELETE FROM run_queue q WHERE q.ctid = ANY(ARRAY(SELECT ctid FROM due WHERE overlapped))
      RETURNING q.run_id
    ),
    recorded AS (
      UPDATE runs r SET state = 'skipped', skip_reason = 'overlap', finished_at = (SELECT now FROM clock)
      WHERE r.id = ANY(ARRAY(SELECT run_id FROM skipped))
    ),
    taken AS (
      UPDATE run_queue q SET ${TAKE_LEASE}
      WHERE q.ctid = ANY(ARRAY(SELECT ctid FROM due WHERE NOT overlapped))
      RETURNING ${RETURNING}
    ),
    claimed AS (
      SELECT * FROM taken
      UNION ALL
      SELECT run_id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'skipped' FROM skipped
    )
    ${CLAIMED}`);
};
const CLAIM_EXCLUSIVE_IN_PARTITIONS = claimExclusiveIn(true);
const CLAIM_EXCLUSIVE_ANYWHERE = claimExclusiveIn(false);

async function claimExclusive(db: Db, workerId: string, partitions: number[] | null, limit: number): Promise<Claimed> {
  const result =
    partitions === null
      ? await runPrepared<Group>(db, CLAIM_EXCLUSIVE_ANYWHERE, { workerId, limit })
      : await runPrepared<Group>(db, CLAIM_EXCLUSIVE_IN_PARTITIONS, { workerId, limit, partitions: intArray(partitions) });
  return toClaimed(result.rows);
}

/**
 * Running runs whose lease ran out: the previous worker died or stalled. Any worker rescues them,
 * whatever partitions it holds, so recovery stays within lease + poll interval and never waits for
 * the dead worker's partition leases to change hands. (Few rows: at most the cluster's total
 * concurrency are running; this reads run_queue_running_idx whole.) The lost attempt is recorded;
 * the run is claimed again by this worker, or goes dead when that was its final attempt.
 */
const rescueStatement = (gated: boolean) =>
  prepare("sk_rescue", sql`
    WITH clock AS (SELECT sk_now() AS now),
    ${
      gated
        ? sql`gate AS (
      -- One look per interval for the cluster: move the stamp when it is older than the interval
      -- (or ahead of the clock, which tests move back), unless another worker holds it right now
      -- (it is looking). Every worker still asks each poll interval, so one that dies leaves the
      -- looking to the others within an interval.
      UPDATE cluster k SET rescued_at = c.now
      FROM clock c
      WHERE k.id = (
        SELECT id FROM cluster
        WHERE id = 1 AND (rescued_at IS NULL OR rescued_at > (SELECT now FROM clock)
          OR rescued_at <= (SELECT now FROM clock) - make_interval(secs => ${sql.placeholder("gateSeconds")}::float8))
        FOR UPDATE SKIP LOCKED)
      RETURNING 1
    ),`
        : sql``
    }
    expired AS (
      SELECT q.ctid, q.run_id, q.attempts, q.max_attempts, q.lease_owner, q.started_at, q.lease_expires_at,
        CASE WHEN q.attempts >= q.max_attempts THEN 'dead' ELSE 'running' END::run_state AS next_state
      FROM run_queue q
      WHERE q.state = 'running' AND q.lease_expires_at < (SELECT now FROM clock) ${gated ? sql`AND EXISTS (SELECT 1 FROM gate)` : sql``}
      LIMIT ${sql.placeholder("limit")}
      FOR UPDATE SKIP LOCKED
    ),
    lost AS (
      -- The attempt whose lease expired is history too: it ran somewhere and never finished.
      INSERT INTO attempts (run_id, attempt, worker_id, started_at, finished_at, outcome, error)
      SELECT e.run_id, e.attempts, coalesce(e.lease_owner, 'unknown'), coalesce(e.started_at, e.lease_expires_at),
        e.lease_expires_at, 'lease_expired', 'lease expired: worker ' || coalesce(e.lease_owner, 'unknown') || ' stopped renewing it'
      FROM expired e
      WHERE e.attempts > 0
      ON CONFLICT (run_id, attempt) DO NOTHING
    ),
    recorded AS (
      -- The record of the attempt that ended; a final one leaves the run dead.
      UPDATE runs r SET
        state = CASE WHEN e.next_state = 'dead' THEN 'dead' ELSE r.state END,
        attempts = e.attempts,
        worker_id = coalesce(e.lease_owner, r.worker_id),
        started_at = e.started_at,
        finished_at = CASE WHEN e.next_state = 'dead' THEN (SELECT now FROM clock) ELSE r.finished_at END,
        last_error = CASE WHEN e.next_state = 'dead' THEN 'lease expired on final attempt'
          ELSE 'lease expired: worker ' || coalesce(e.lease_owner, 'unknown') || ' stopped renewing it' END
      FROM expired e
      WHERE r.id = e.run_id
    ),
    claimed AS (
      UPDATE run_queue q SET
        state = e.next_state,
        attempts = CASE WHEN e.next_state = 'running' THEN q.attempts + 1 ELSE q.attempts END,
        lease_owner = CASE WHEN e.next_state = 'running' THEN ${sql.placeholder("workerId")} END,
        lease_expires_at = CASE WHEN e.next_state = 'running' THEN c.now + make_interval(secs => q.lease_seconds) END,
        started_at = CASE WHEN e.next_state = 'running' THEN c.now END,
        run_after = CASE WHEN e.next_state = 'running' THEN c.now + make_interval(secs => q.lease_seconds) ELSE q.run_after END
      FROM expired e, clock c
      WHERE q.ctid = e.ctid
      RETURNING ${RETURNING}
    )
    ${CLAIMED}`);

const RESCUE = rescueStatement(false);
const RESCUE_GATED = rescueStatement(true);

async function rescueExpired(db: Db, workerId: string, limit: number, gateMs: number | undefined): Promise<Claimed> {
  const result =
    gateMs === undefined
      ? await runPrepared<Group>(db, RESCUE, { workerId, limit })
      : await runPrepared<Group>(db, RESCUE_GATED, { workerId, limit, gateSeconds: gateMs / 1000 });
  return toClaimed(result.rows);
}

/**
 * What the runs of one group share, held once: the settings read from run_settings and the queue
 * row, and the schedule names, parsed on first use (a worker at warn level running handlers that
 * never ask reads none).
 */
class GroupShared {
  private parsedNames: string[] | undefined = undefined;
  /** Shared by the group's runs: nothing downstream changes a retry policy. */
  readonly retry: RetryPolicy;
  readonly payloadRefersToEnv: boolean;

  constructor(
    readonly handler: string,
    readonly payloadJson: string,
    readonly leaseSeconds: number,
    readonly origin: ClaimedRun["origin"],
    readonly maxAttempts: number,
    retry: RetryPolicy,
    private readonly namesJson: string,
  ) {
    this.retry = Object.freeze(retry);
    this.payloadRefersToEnv = jsonMayReferToEnv(payloadJson);
  }

  name(i: number): string {
    return (this.parsedNames ??= JSON.parse(this.namesJson) as string[])[i];
  }
}

/**
 * A claimed run as unpacked from a group: its own numbers and tid, the group's settings by
 * reference, and what a handler may never read made only when read (the slot's Date, the
 * schedule's name, the payload; most handlers read no slot and no name, and a no-op no payload).
 * A claimed run stays alive from claim to finish, across young-generation collections that copy
 * every field of every live object: fields shared by the group live once, on the group.
 */
class GroupRun implements ClaimedRun {
  private slot: Date | undefined = undefined;
  private parsedPayload: unknown = undefined;

  constructor(
    readonly id: number,
    readonly scheduleId: number,
    private readonly slotMs: number,
    readonly attempt: number,
    public queueTid: string,
    private readonly group: GroupShared,
    private readonly index: number,
  ) {}

  get scheduledFor(): Date {
    return (this.slot ??= new Date(this.slotMs));
  }

  get scheduleName(): string {
    return this.group.name(this.index);
  }

  // Parsed per run, so no two handlers share (and could change) one payload object.
  get payload(): unknown {
    return (this.parsedPayload ??= JSON.parse(this.group.payloadJson));
  }

  get handler(): string {
    return this.group.handler;
  }

  get leaseSeconds(): number {
    return this.group.leaseSeconds;
  }

  get origin(): ClaimedRun["origin"] {
    return this.group.origin;
  }

  get retry(): RetryPolicy {
    return this.group.retry;
  }

  get maxAttempts(): number {
    return this.group.maxAttempts;
  }

  get payloadRefersToEnv(): boolean {
    return this.group.payloadRefersToEnv;
  }
}

/** Unpack CLAIMED's groups into the runs to execute and the runs settled on the way. */
function toClaimed(groups: Group[]): Claimed {
  const claimed: ClaimedRun[] = [];
  const settled: ClaimOutcome[] = [];
  for (const g of groups) {
    const n = JSON.parse(g.numbers) as number[];
    if (g.state !== "running") {
      // A skipped run is its id alone; a dead one (a rescue's final attempt) has all four numbers.
      const stride = g.tids === null ? 1 : 4;
      for (let i = 0; i < n.length; i += stride) settled.push({ id: n[i], state: g.state });
      continue;
    }
    const tids = g.tids!.split(";");
    if (n.length !== tids.length * 4) throw new Error(`claim: a group of ${tids.length} tids came with ${n.length / 4} runs`);
    const group = new GroupShared(
      g.handler!,
      g.payload!,
      g.lease_seconds!,
      g.origin!,
      g.max_attempts!,
      { maxAttempts: g.retry_max_attempts!, baseSeconds: g.retry_base_seconds!, capSeconds: g.retry_cap_seconds! },
      g.names,
    );
    for (let i = 0; i < tids.length; i++) claimed.push(new GroupRun(n[4 * i], n[4 * i + 1], n[4 * i + 2], n[4 * i + 3], tids[i], group, i));
  }
  return { claimed, settled, exclusiveFound: 0 };
}
