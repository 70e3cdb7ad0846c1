// How every claim statement answers, and how the worker unpacks the answer: the rows a claim
// returns (RETURNING), grouped by the settings they share (CLAIMED), decoded into ClaimedRun objects.
import { sql } from "drizzle-orm";
import { jsonMayReferToEnv } from "../../security/mask";
import type { RetryPolicy } from "../backoff";

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
  /** The schedule's timeoutSeconds: the worker aborts the attempt once it has run this long (null: no limit but the lease). */
  timeoutSeconds: number | null;
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
  /**
   * The queue it was claimed for: set when the claim named queues (a worker always does), so the
   * worker counts it against that queue's concurrency; undefined for claims of every queue.
   */
  queue?: string;
};

/** What one claim statement did to a row: only `running` rows are handed to handlers. */
export type ClaimOutcome = { id: number; state: "running" | "skipped" | "dead" };

/** What one claim statement, or a whole claim, hands back. */
export type Claimed = { claimed: ClaimedRun[]; settled: ClaimOutcome[]; exclusiveFound: number };

/**
 * What a claim statement answers: its runs grouped by the settings they share, each group one row
 * (see CLAIMED). A group at the top of the hour holds most of a batch.
 */
export type Group = {
  /** 'pending': runs the plain claim locked but refused, past their max lateness (too-late.ts), each an id and a tid. */
  state: ClaimOutcome["state"] | "pending";
  handler: string | null;
  /** The payload's JSON text: parsed once per run. */
  payload: string | null;
  lease_seconds: number | null;
  origin: ClaimedRun["origin"] | null;
  retry_max_attempts: number | null;
  retry_base_seconds: number | null;
  retry_cap_seconds: number | null;
  timeout_seconds: number | null;
  max_attempts: number | null;
  /** JSON: [id, schedule_id, scheduled_for_ms, attempts] per run, one flat array (settled runs: [id] each). */
  numbers: string;
  /** The runs' queue row tids, "(page,item)", joined by ";" (null for settled runs). */
  tids: string | null;
  /** The runs' schedule names, a JSON array in the order of `numbers` (parsed when one is read). */
  names: string;
  /** The group's queue, from statements that claim in several queues at once (the rescue); absent otherwise. */
  queue?: string | null;
};

// What every claim statement's UPDATE returns for a run it now holds: the queue row as updated,
// which carries the schedule's settings (copied when the run was queued, rewritten by edits; the
// handler, payload and retry policy as the number of their run_settings row), so no schedule is read.
export const RETURNING = sql`q.run_id, q.schedule_id, q.scheduled_for, q.attempts, q.ctid AS tid, q.schedule_name,
  q.settings_id, q.lease_seconds, q.origin, q.max_attempts, q.state`;

/**
 * How every claim statement answers (over its CTE `claimed`, RETURNING's columns): one row per
 * group of runs that share their settings, with the runs' own numbers in one JSON array, their
 * queue rows' tids in one string and their schedule names in one JSON array, and the group's
 * handler, payload, retry policy and timeout read once from run_settings. Why not a row per run: the
 * driver turns every column of every row into a string of its own, then parses it, and a claimed
 * run is a dozen columns; in groups the worker parses a few strings per batch. At the top of the
 * hour a batch is one group; schedules with settings of their own make groups of one, no worse than
 * a row each. The aggregates advance on each input row in turn, so the i-th entry of
 * each belongs to the same run.
 */
const claimedAnswer = (withQueue: boolean) => sql`
    SELECT g.state, s.handler, s.payload::text AS payload, g.lease_seconds, g.origin,
      s.retry_max_attempts, s.retry_base_seconds, s.retry_cap_seconds, s.timeout_seconds, g.max_attempts, g.numbers, g.tids, g.names${withQueue ? sql`, g.queue` : sql``}
    FROM (
      SELECT c.state, c.settings_id, c.lease_seconds, c.origin, c.max_attempts${withQueue ? sql`, c.queue` : sql``},
        -- [id, schedule id, slot in epoch milliseconds, attempts] per run, flat: one JSON.parse and
        -- no strings. A skipped run has only its id (concat_ws leaves out NULLs), and no tid. The
        -- slot in whole milliseconds, truncated as a JS Date would: date_part is a float8, exact to
        -- ±0.25 µs for this century's instants, and the 0.5 µs added keeps a whole millisecond from
        -- flooring to the one before it while no microsecond count (≤ 999 µs past it) reaches the
        -- next. extract(epoch …), exact, is numeric arithmetic and costs more per run.
        '[' || string_agg(concat_ws(',', c.run_id, c.schedule_id, floor(date_part('epoch', c.scheduled_for) * 1000 + 0.0005)::bigint, c.attempts), ',') || ']' AS numbers,
        string_agg(c.tid::text, ';') AS tids,
        json_agg(c.schedule_name)::text AS names
      FROM claimed c
      GROUP BY c.state, c.settings_id, c.lease_seconds, c.origin, c.max_attempts${withQueue ? sql`, c.queue` : sql``}
    ) g
    -- A primary-key probe per group, whatever the planner knows of run_settings: LIMIT keeps the
    -- subquery from being flattened into a join, which a plan made while run_settings looked
    -- empty ran as a scan of the whole table (a table as long as there are distinct payloads).
    -- Settled runs (skipped, dead) have no settings in their group.
    LEFT JOIN LATERAL (SELECT * FROM run_settings s WHERE s.id = g.settings_id LIMIT 1) s ON true`;
export const CLAIMED = claimedAnswer(false);
/**
 * CLAIMED for a statement that claims in several queues at once (the rescue): the groups are split
 * by queue too, so the worker knows which queue's slots each run takes. RETURNING must add q.queue.
 */
export const CLAIMED_BY_QUEUE = claimedAnswer(true);

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
    readonly timeoutSeconds: number | null,
    readonly queue: string | undefined,
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

  get timeoutSeconds(): number | null {
    return this.group.timeoutSeconds;
  }

  get payloadRefersToEnv(): boolean {
    return this.group.payloadRefersToEnv;
  }
  get queue(): string | undefined {
    return this.group.queue;
  }
}

/**
 * Unpack CLAIMED's groups into the runs to execute and the runs settled on the way; `queue` is the
 * one queue the statement claimed in, when it named one (a group's own queue wins). Refused groups
 * (state pending) are the plain claim's to record (splitRefused); here they are an error.
 */
export function toClaimed(groups: Group[], queue?: string): Claimed {
  const claimed: ClaimedRun[] = [];
  const settled: ClaimOutcome[] = [];
  for (const g of groups) {
    const n = JSON.parse(g.numbers) as number[];
    if (g.state === "pending") throw new Error("claim: a group of refused runs reached toClaimed");
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
      g.timeout_seconds ?? null,
      g.queue ?? queue,
    );
    for (let i = 0; i < tids.length; i++) claimed.push(new GroupRun(n[4 * i], n[4 * i + 1], n[4 * i + 2], n[4 * i + 3], tids[i], group, i));
  }
  return { claimed, settled, exclusiveFound: 0 };
}

/** The queue row tids of the refused groups (state pending) of a claim's answer, and the other groups. */
export function splitRefused(groups: Group[]): { refusedTids: string[]; rest: Group[] } {
  const refusedTids: string[] = [];
  const rest: Group[] = [];
  for (const g of groups) {
    if (g.state === "pending") refusedTids.push(...g.tids!.split(";"));
    else rest.push(g);
  }
  return { refusedTids, rest };
}
