import { sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { intArray, prepare, runPrepared } from "../db/prepared";
import { withSchedule } from "./finish";

/**
 * One in-flight run to renew: its id, the fencing token this worker claimed it with, and its
 * schedule (how the queue row is found; without it the runs row is read to find it).
 */
export type HeldRun = { id: number; attempt: number; scheduleId?: number; leaseSeconds?: number; queueTid?: string };

/**
 * How many of one page's rows a single renewal statement may rewrite. A HOT update puts the new
 * version on the row's own page, and until the statement commits the old one stays too: renewing
 * every row of a page at once would need half of it free. Rows claimed together sit together (a
 * claim writes its new versions side by side, filled to the table's fillfactor of 80), so a worker
 * renews them in waves of at most a fifth of a page's rows (16 % of the page, inside the 20 % the
 * fillfactor leaves). Each wave commits before the next, which then finds the previous wave's old
 * versions dead and prunes them as it reads the page: the room is there again.
 */
const WAVES = 5;

/** Split runs so no wave holds more than one in WAVES of the rows known to share a page. */
export function renewalWaves<T extends { queueTid?: string }>(runs: T[]): T[][] {
  const onPage = new Map<string, number>();
  const waves: T[][] = [];
  for (const r of runs) {
    // A tid reads "(page,item)"; without one the row's page is unknown and it goes first.
    const page = r.queueTid ? r.queueTid.slice(1, r.queueTid.indexOf(",")) : undefined;
    let wave = 0;
    if (page !== undefined) {
      const seen = onPage.get(page) ?? 0;
      onPage.set(page, seen + 1);
      wave = seen % WAVES;
    }
    (waves[wave] ??= []).push(r);
  }
  return waves.filter((w) => w !== undefined);
}

/**
 * Renew the leases of all of a worker's in-flight runs, fenced on the token: one statement per
 * wave (a handful at most; see WAVES), each for every run in it.
 * Returns the runs still held, each with where its queue row is now (a renewal writes a new row
 * version); a run missing from the map was taken over (or finished elsewhere), so its handler must
 * be aborted. Touches only run_queue.lease_expires_at, an unindexed column of a
 * narrow row: a HOT update.
 */
export async function heartbeatRuns(db: Db, workerId: string, runs: HeldRun[]): Promise<Map<number, string>> {
  const held = new Map<number, string>();
  if (runs.length === 0) return held;
  runs = await withSchedule(db, runs);
  // One statement (and so one transaction) per wave, in turn: see WAVES.
  for (const wave of renewalWaves(runs)) for (const [id, tid] of await renewWave(db, workerId, wave)) held.set(id, tid);
  return held;
}

// One clock: the new expiry is sk_now() + lease; fencing: only the current token's holder renews.
// Each queue row is found among its schedule's running runs in run_queue_running_idx (a probe per
// run, OFFSET 0 keeps it one), then updated where that look-up found it.
const RENEW = prepare("sk_heartbeat", sql`
    WITH held AS (
      SELECT f.ctid, h.id, h.attempt, coalesce(h.lease_seconds, f.lease_seconds) AS lease_seconds
      FROM unnest(${sql.placeholder("ids")}::bigint[], ${sql.placeholder("scheduleIds")}::bigint[],
        ${sql.placeholder("tokens")}::int[], ${sql.placeholder("leases")}::int[]) AS h(id, schedule_id, attempt, lease_seconds)
      CROSS JOIN LATERAL (
        SELECT q.ctid, q.lease_seconds FROM run_queue q
        WHERE q.state = 'running' AND q.schedule_id = h.schedule_id AND q.run_id = h.id
        OFFSET 0
      ) f
    ),
    renewed AS (
      UPDATE run_queue q
      SET lease_expires_at = (SELECT sk_now()) + make_interval(secs => h.lease_seconds)
      FROM held h
      -- The fence is checked on the row as updated (a concurrent rescue re-checks it after its lock).
      -- An expired lease is lost even before anyone takes the run over: the worker's own deadline
      -- (lease minus margin since the last renewal was sent) has aborted the attempt by then, and a
      -- renewal that revived the lease would let that aborted attempt's late writes pass the fence.
      WHERE q.ctid = h.ctid
        AND q.state = 'running' AND q.run_id = h.id AND q.attempts = h.attempt AND q.lease_owner = ${sql.placeholder("workerId")}
        AND q.lease_expires_at > (SELECT sk_now())
      RETURNING q.run_id, q.ctid
    )
    -- "id (page,item)" per run in one string: the driver's cost is per row and per column.
    SELECT string_agg(concat_ws(' ', run_id, ctid), ';') AS renewed FROM renewed`);

async function renewWave(db: Db, workerId: string, runs: HeldRun[]): Promise<Map<number, string>> {
  const { rows } = await runPrepared<{ renewed: string | null }>(db, RENEW, {
    workerId,
    ids: intArray(runs.map((r) => r.id)),
    scheduleIds: intArray(runs.map((r) => r.scheduleId!)),
    tokens: intArray(runs.map((r) => r.attempt)),
    leases: intArray(runs.map((r) => r.leaseSeconds ?? null)),
  });
  const held = new Map<number, string>();
  const renewed = rows[0]?.renewed;
  if (renewed) {
    for (const entry of renewed.split(";")) {
      const space = entry.indexOf(" ");
      held.set(Number(entry.slice(0, space)), entry.slice(space + 1));
    }
  }
  return held;
}
