// Ordinary claim latency must not lose work: a real worker process drains a backlog far larger
// than it can start at once (the top of the hour) while two schedules fire every second beside it,
// so their runs start seconds late, past their own interval, and the lateness pass sees them wait
// behind their successors. Under `all` every slot still runs; under `latest` every slot runs or is
// coalesced into a later slot that ran, and the newest runs. The effect is the sql-ledger
// handler's own row per slot, not Slotkeeper's counters.
import { describe, expect, it } from "vitest";
import { runClockFrom } from "../lib/testing/clock";
import { setupTestDatabase } from "../lib/testing/db";
import { makeRuns, makeSchedule, RUNS_BY_HAND, slots } from "../lib/testing/factories";
import { killWorkers, liveWorkers, startWorkers } from "../lib/testing/spawn";
import { waitUntil } from "../lib/testing/wait";

const T0 = new Date("2030-01-01T10:00:00Z");
const BACKLOG = 2_000;
const t = setupTestDatabase();

const dbNowMs = async () => (await t.pool.query<{ now: Date }>("SELECT sk_now() AS now")).rows[0].now.getTime();

describe("catch-up under load", () => {
  it("a backlog that makes 1-second schedules start late: all runs every slot, latest every slot or a later one, and the newest", async () => {
    await runClockFrom(t.pool, new Date(T0.getTime() - 1_000));
    // The backlog: 2,000 runs of 40 ms each (about 20 s of work), due just before the two schedules'
    // first slot in their own partitions (8 and 9), for a worker that runs 4 at once. The two schedules
    // allow overlap, so their runs are claimed by the same due-order statement as the backlog and
    // queue behind it (a schedule that forbids overlap is claimed by its own statement, which a
    // backlog of another schedule does not delay).
    const { id: backlog } = await makeSchedule(t.db, { handler: "sleep", payload: { ms: 40 }, everySeconds: 3600, ...RUNS_BY_HAND });
    await makeRuns(t.db, backlog, slots(new Date(T0.getTime() - 2_000), BACKLOG, 1).map((s, i) => ({ scheduledFor: s, partition: 8 + (i % 2) })));
    const { rows } = await t.pool.query<{ id: string; catch_up: string }>(
      `INSERT INTO schedules (name, handler, every_seconds, lease_seconds, catch_up, overlap, next_slot_at, partition)
       VALUES ('every-second-all', 'sql-ledger', 1, 30, 'all', 'allow', $1, 8), ('every-second-latest', 'sql-ledger', 1, 30, 'latest', 'allow', $1, 9)
       RETURNING id, catch_up`,
      [T0],
    );
    const all = Number(rows.find((r) => r.catch_up === "all")!.id);
    const latest = Number(rows.find((r) => r.catch_up === "latest")!.id);
    await startWorkers(t.url, ["busy"], { SLOTKEEPER_CONCURRENCY: "4", SLOTKEEPER_CLAIM_BATCH: "4" });

    // Until the backlog is through, and then until both schedules are caught up again.
    await waitUntil(
      async () => (await t.pool.query(`SELECT 1 FROM run_queue WHERE schedule_id = $1 LIMIT 1`, [backlog])).rowCount === 0,
      240_000,
      "the backlog to drain",
      500,
    );
    const drainedAt = await dbNowMs();
    const end = Math.floor(drainedAt / 1000) * 1000;
    // A slot coalesced late in the drain may point at a slot due just after it (the newest due when
    // the pass ran, every 5 s at most): read up to 10 s further, once those have settled too.
    const settledTo = end + 10_000;
    await waitUntil(async () => (await dbNowMs()) > settledTo, 60_000, "the clock to pass the window");
    await waitUntil(
      async () =>
        (await t.pool.query(`SELECT 1 FROM run_status WHERE schedule_id = ANY($1::bigint[]) AND scheduled_for <= $2 AND state <> 'done' AND state <> 'skipped' LIMIT 1`, [[all, latest], new Date(settledTo)]))
          .rowCount === 0,
      60_000,
      "both schedules to catch up",
    );
    await killWorkers(liveWorkers());

    type Row = { schedule_id: string; scheduled_for: Date; skipped_until: Date | null; state: string; skip_reason: string | null; coalesced_into: Date | null; started_at: Date | null };
    const { rows: runs } = await t.pool.query<Row>(
      `SELECT schedule_id, scheduled_for, skipped_until, state, skip_reason, coalesced_into, started_at FROM runs
       WHERE schedule_id = ANY($1::bigint[]) AND scheduled_for BETWEEN $2 AND $3 ORDER BY scheduled_for`,
      [[all, latest], T0, new Date(settledTo)],
    );
    const { rows: ledger } = await t.pool.query<{ schedule_id: string; scheduled_for: Date; writes: number }>(
      `SELECT schedule_id, scheduled_for, writes FROM ledger WHERE schedule_id = ANY($1::bigint[]) AND scheduled_for BETWEEN $2 AND $3`,
      [[all, latest], T0, new Date(settledTo)],
    );
    const wrote = (id: number) => new Set(ledger.filter((l) => Number(l.schedule_id) === id).map((l) => l.scheduled_for.getTime()));
    const expected: number[] = [];
    for (let s = T0.getTime(); s <= end; s += 1000) expected.push(s);

    // The load was real: slots of the 'all' schedule started later than its own interval.
    const lateStarts = runs.filter((r) => Number(r.schedule_id) === all && r.scheduled_for.getTime() <= end && r.started_at && r.started_at.getTime() - r.scheduled_for.getTime() > 1_000);
    expect(lateStarts.length).toBeGreaterThanOrEqual(8);

    // all: every slot ran, once (the handler's own row per slot, written once).
    const allWrote = wrote(all);
    expect(expected.filter((s) => !allWrote.has(s)).map((s) => new Date(s).toISOString())).toEqual([]);
    expect(ledger.filter((l) => Number(l.schedule_id) === all && l.writes !== 1)).toEqual([]);
    expect(runs.filter((r) => Number(r.schedule_id) === all && r.scheduled_for.getTime() <= end && r.state !== "done")).toEqual([]);

    // latest: every slot ran, or was coalesced into a later slot that ran (or that was, having waited
    // past its own successor, coalesced on into a later one: the chain ends at a slot that ran);
    // never both; the newest ran.
    const latestWrote = wrote(latest);
    const latestRows = runs.filter((r) => Number(r.schedule_id) === latest);
    const rowOf = (s: number) => latestRows.find((r) => r.scheduled_for.getTime() <= s && (r.skipped_until ?? r.scheduled_for).getTime() >= s);
    const lost: string[] = [];
    let coalesced = 0;
    for (const s of expected) {
      let row = rowOf(s);
      if (row?.state === "done" && latestWrote.has(s)) continue;
      const chain = [s];
      while (row?.state === "skipped" && row.skip_reason === "coalesced" && row.coalesced_into && row.coalesced_into.getTime() > chain[chain.length - 1] && !latestWrote.has(chain[chain.length - 1])) {
        chain.push(row.coalesced_into.getTime());
        row = rowOf(chain[chain.length - 1]);
      }
      if (chain.length > 1 && row?.state === "done" && latestWrote.has(chain[chain.length - 1])) {
        coalesced++;
        continue;
      }
      lost.push(`${chain.map((x) => new Date(x).toISOString()).join(" → ")}: ${row ? `${row.state} ${row.skip_reason ?? ""}` : "no row"}`);
    }
    expect(lost).toEqual([]);
    expect(latestWrote.has(end) || rowOf(end)?.skip_reason === "coalesced").toBe(true);
    expect(latestWrote.has(settledTo)).toBe(true);
    console.log(JSON.stringify({ event: "test:catch-up-load", slots: expected.length, allLateStarts: lateStarts.length, latestCoalesced: coalesced, drainSeconds: (drainedAt - T0.getTime()) / 1000 }));
  }, 360_000);
});
