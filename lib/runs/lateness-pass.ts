import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { tidArray } from "../db/prepared";
import type { CatchUpPolicy } from "../db/schema";
import { dueAtMs, newestDueSlot, NEVER } from "../schedules/catch-up";
import { slotFate } from "../schedules/missed";

type Executor = Pick<Db, "execute">;

/** Slots the lateness pass turned into skipped rows, by reason, and whether a partition had more due runs than it looked at. */
export type LatenessPassResult = { skipped: number; coalesced: number; tooLate: number; windowFull: boolean };

export type LatenessPassOptions = {
  /** Partitions to look in (null: all). */
  partitions: number[] | null;
  /** SLOTKEEPER_CATCH_UP_GRACE_SECONDS. */
  graceSeconds: number;
  /**
   * Look at the oldest this many due pending runs of each partition (null: every one). The tick
   * loop's periodic pass is bounded, so that a top-of-the-hour backlog costs it a few index probes
   * per partition rather than a walk of the backlog; a worker settling a partition it has just
   * started claiming in looks at everything once (see worker/runner.ts).
   */
  windowPerPartition?: number | null;
};

/**
 * The default window of the periodic pass: two index probes per run looked at, whatever the
 * backlog, so a pass's cost is bounded by partitions × window, not by the backlog
 * (docs/benchmarks.md, "Measurements behind the hot path").
 */
export const LATENESS_WINDOW_DEFAULT = 100;

type Candidate = {
  tid: string;
  run_id: number;
  schedule_id: number;
  scheduled_for: string;
  run_after: string;
  catch_up: CatchUpPolicy;
  max_lateness_seconds: number | null;
  jitter_seconds: number;
  cron: string | null;
  every_seconds: number | null;
  timezone: string;
  next_slot_at: string;
  successor: string | null;
  newest_due: string | null;
};

/**
 * Apply the catch-up rule (lib/schedules/missed.ts, the same function the tick's planner uses) and
 * max lateness to runs that were materialised as pending and are due but never attempted (a
 * worker outage after the tick wrote them): `skip` → skipped `missed`; `latest` → every missed
 * run but the schedule's newest due slot is skipped `coalesced` into that slot; `all` → left to
 * run; older than max lateness → `too_late` under any policy. Only origin `schedule`/`catch_up`
 * with attempts = 0: retries are not missed slots, and manual and backfill runs were asked for
 * explicitly. A run the pass keeps keeps its origin (it was written by the schedule).
 *
 * Two statements. The first reads candidates: the oldest due pending runs of each partition
 * through run_queue_claim_idx (partition, run_after), a primary-key probe of each one's schedule,
 * and its successor slot: the next slot row of its schedule (runs_slot_key), or else the
 * schedule's next_slot_at (the high-water mark IS the next unmaterialised slot). SQL returns only
 * runs that might change (for `latest`, those whose successor slot is due; for `skip`, also those
 * older than the grace; any with max lateness past), so a top-of-the-hour backlog of on-time runs
 * comes back empty. TypeScript then decides each with the rule, adding jitter with jitterOffsetMs:
 * no cron arithmetic in SQL. The second statement applies the decisions: it locks the queue rows
 * FOR UPDATE SKIP LOCKED, re-checks that each is still a never-attempted pending run, and skips
 * what a claimer holds (being run settles it).
 */
export async function runLatenessPass(db: Executor, opts: LatenessPassOptions): Promise<LatenessPassResult> {
  const window = opts.windowPerPartition === undefined ? LATENESS_WINDOW_DEFAULT : opts.windowPerPartition;
  const limit = window === null ? sql`` : sql`LIMIT ${window}`;
  const dueIn = (where: ReturnType<typeof sql>) => sql`
    SELECT q.ctid AS tid, q.run_id, q.schedule_id, q.scheduled_for, q.run_after, q.attempts, q.origin, q.partition
    FROM run_queue q
    WHERE q.state = 'pending' AND q.run_after <= (SELECT now FROM clock) ${where}
    ORDER BY q.run_after ${limit}`;
  const raw =
    opts.partitions === null
      ? dueIn(sql``)
      : sql`SELECT q.* FROM unnest(${sql.param(opts.partitions)}::int[]) AS p(partition)
          CROSS JOIN LATERAL (${dueIn(sql`AND q.partition = p.partition`)}) q`;
  const grace = sql`make_interval(secs => ${opts.graceSeconds})`;
  const found = await db.execute<{ rows: Candidate[] | null; fullest: number }>(sql`
    WITH clock AS (SELECT sk_now() AS now),
    raw AS (${raw}),
    judged AS (
      SELECT r.tid, r.run_id, r.schedule_id, r.scheduled_for, r.run_after, s.catch_up, s.max_lateness_seconds,
             s.jitter_seconds, s.cron, s.every_seconds, s.timezone, s.next_slot_at,
             coalesce(nx.scheduled_for, s.next_slot_at) AS successor
      FROM raw r
      -- A primary-key probe per run (OFFSET 0 keeps it one): joined, the planner hashed a
      -- sequential scan of every schedule even when no run was due.
      CROSS JOIN LATERAL (
        SELECT s.catch_up, s.max_lateness_seconds, s.jitter_seconds, s.cron, s.every_seconds, s.timezone, s.next_slot_at
        FROM schedules s WHERE s.id = r.schedule_id OFFSET 0) s
      -- The next slot row after it (a manual run, slot_seq <> 0, is not a slot). Not under 'all',
      -- where only max lateness can change a run.
      LEFT JOIN LATERAL (
        SELECT n.scheduled_for FROM runs n
        WHERE s.catch_up <> 'all' AND n.schedule_id = r.schedule_id AND n.scheduled_for > r.scheduled_for AND n.slot_seq = 0
        ORDER BY n.scheduled_for LIMIT 1) nx ON true
      WHERE r.attempts = 0 AND r.origin IN ('schedule', 'catch_up')
        AND (s.catch_up <> 'all' OR s.max_lateness_seconds IS NOT NULL)
    ),
    changing AS (
      -- What may change (jitter only delays a due time, so a successor slot after now is not due).
      SELECT * FROM judged j
      WHERE (j.max_lateness_seconds IS NOT NULL AND j.run_after < (SELECT now FROM clock) - make_interval(secs => j.max_lateness_seconds))
         OR (j.catch_up = 'skip' AND (j.run_after < (SELECT now FROM clock) - ${grace} OR j.successor <= (SELECT now FROM clock)))
         OR (j.catch_up = 'latest' AND j.successor <= (SELECT now FROM clock))
    ),
    newest AS (
      -- 'latest': the schedule's newest due slot row that runs (or ran), coalesced into.
      SELECT f.schedule_id, n.scheduled_for AS newest_due
      FROM (SELECT DISTINCT schedule_id FROM changing WHERE catch_up = 'latest') f
      CROSS JOIN LATERAL (
        SELECT n.scheduled_for FROM runs n
        WHERE n.schedule_id = f.schedule_id AND n.slot_seq = 0 AND n.due_at <= (SELECT now FROM clock) AND n.state <> 'skipped'
        ORDER BY n.scheduled_for DESC LIMIT 1) n
    )
    SELECT
      (SELECT json_agg(json_build_object('tid', c.tid::text, 'run_id', c.run_id, 'schedule_id', c.schedule_id,
          'scheduled_for', c.scheduled_for, 'run_after', c.run_after, 'catch_up', c.catch_up,
          'max_lateness_seconds', c.max_lateness_seconds, 'jitter_seconds', c.jitter_seconds, 'cron', c.cron,
          'every_seconds', c.every_seconds, 'timezone', c.timezone, 'next_slot_at', c.next_slot_at,
          'successor', c.successor, 'newest_due', n.newest_due))
        FROM changing c LEFT JOIN newest n ON n.schedule_id = c.schedule_id) AS rows,
      (SELECT coalesce(max(k), 0)::int FROM (SELECT count(*) AS k FROM raw GROUP BY partition) x) AS fullest,
      (SELECT now FROM clock) AS now`);
  const head = found.rows[0] as { rows: Candidate[] | null; fullest: number; now: string | Date };
  const out: LatenessPassResult = { skipped: 0, coalesced: 0, tooLate: 0, windowFull: window !== null && head.fullest >= window };
  const candidates = head.rows ?? [];
  if (candidates.length === 0) return out;

  const now = new Date(head.now);
  const nowMs = now.getTime();
  const decided = { tids: [] as string[], ids: [] as number[], reasons: [] as string[], into: [] as (Date | null)[] };
  const newestBySchedule = new Map<number, Date | null>();
  for (const c of candidates) {
    const s = { id: Number(c.schedule_id), cron: c.cron, everySeconds: c.every_seconds, timezone: c.timezone, jitterSeconds: c.jitter_seconds };
    const slot = new Date(c.scheduled_for);
    const successor = c.successor === null || new Date(c.successor).getTime() >= NEVER.getTime() ? null : new Date(c.successor);
    let newest: Date | null = null;
    if (c.catch_up === "latest") {
      if (!newestBySchedule.has(s.id)) {
        // The newest due slot: the newest due slot row, or a newer slot the tick has not written yet.
        const nextSlotAt = new Date(c.next_slot_at);
        const unwritten = nextSlotAt.getTime() <= nowMs && nextSlotAt.getTime() < NEVER.getTime() ? newestDueSlot(s, nextSlotAt, now) : null;
        const written = c.newest_due === null ? null : new Date(c.newest_due);
        newestBySchedule.set(s.id, unwritten ?? written);
      }
      newest = newestBySchedule.get(s.id) ?? slot;
    }
    const fate = slotFate(
      { dueMs: new Date(c.run_after).getTime(), successorDueMs: successor ? dueAtMs(s, successor) : null, newestDue: newest === null || newest.getTime() <= slot.getTime() },
      { nowMs, graceMs: opts.graceSeconds * 1000, policy: c.catch_up, maxLatenessSeconds: c.max_lateness_seconds },
    );
    if (fate !== "missed" && fate !== "coalesced" && fate !== "too_late") continue;
    decided.tids.push(c.tid);
    decided.ids.push(Number(c.run_id));
    decided.reasons.push(fate);
    decided.into.push(fate === "coalesced" ? newest : null);
  }
  if (decided.ids.length === 0) return out;

  const r = await db.execute<{ reason: "missed" | "coalesced" | "too_late"; n: number }>(sql`
    WITH d AS (
      SELECT * FROM unnest(${tidArray(decided.tids)}::tid[], ${sql.param(decided.ids)}::bigint[],
                           ${sql.param(decided.reasons)}::text[], ${sql.param(decided.into)}::timestamptz[]) AS d(tid, run_id, reason, into_slot)
    ),
    locked AS (
      -- Lock what will change and check it is still a never-attempted pending run now that it is
      -- locked (a claimer may have taken it since the first statement; it then runs instead).
      -- The tid finds the row without an index descent; a row that moved since is left for later.
      SELECT q.ctid, q.run_id FROM run_queue q
      WHERE q.ctid = ANY(ARRAY(SELECT tid FROM d)) AND q.state = 'pending' AND q.attempts = 0
      FOR UPDATE SKIP LOCKED
    ),
    applied AS (
      SELECT l.ctid, d.run_id, d.reason::skip_reason AS reason, d.into_slot FROM locked l JOIN d ON d.tid = l.ctid AND d.run_id = l.run_id
    ),
    unqueued AS (
      DELETE FROM run_queue q WHERE q.ctid = ANY(ARRAY(SELECT ctid FROM applied))
    ),
    skipped AS (
      UPDATE runs SET state = 'skipped', skip_reason = a.reason, coalesced_into = a.into_slot,
             skipped_until = runs.scheduled_for, skipped_count = 1, finished_at = (SELECT sk_now())
      FROM applied a
      WHERE runs.id = a.run_id
      RETURNING a.reason
    )
    SELECT reason, count(*)::int AS n FROM skipped GROUP BY reason`);
  for (const row of r.rows) {
    if (row.reason === "missed") out.skipped += row.n;
    else if (row.reason === "coalesced") out.coalesced += row.n;
    else out.tooLate += row.n;
  }
  return out;
}

/**
 * The lateness pass again at once while it changed something and some partition had more due
 * runs than its window (a backlog of missed runs larger than one window), at most `maxRounds`
 * times: each round removes what it skipped from the front of the queue.
 */
export async function runLatenessPassRounds(db: Executor, opts: LatenessPassOptions & { maxRounds?: number }): Promise<LatenessPassResult> {
  const total: LatenessPassResult = { skipped: 0, coalesced: 0, tooLate: 0, windowFull: false };
  for (let i = 0; i < (opts.maxRounds ?? 10); i++) {
    const r = await runLatenessPass(db, opts);
    total.skipped += r.skipped;
    total.coalesced += r.coalesced;
    total.tooLate += r.tooLate;
    total.windowFull = r.windowFull;
    if (!r.windowFull || r.skipped + r.coalesced + r.tooLate === 0) break;
  }
  return total;
}
