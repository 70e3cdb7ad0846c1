// Timing edits after the database clock stepped back (issue #21, promise: each slot exists once).
// A worker is simulated second by second (tick, claim what is due, finish it) on a frozen database
// clock that the test moves, the way the fault run does: +20 s, 10 s later −20 s, then an edit
// through the product's mutations. The oracle is outside the product: slot instants are brute-force
// arithmetic over whole seconds (an instant is a slot of "every n s" when its epoch second is a
// multiple of n; of a seconds cron when its second of the minute is in the listed set), and the
// rows are judged by the schedule time they cover, [scheduled_for, skipped_until].
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { SYSTEM_ACTOR } from "../audit/record";
import { claimRuns } from "../runs/claim";
import { finishRuns } from "../runs/finish";
import { tickOnce } from "../runs/tick";
import { advanceClock, dbNow, setClock } from "../testing/clock";
import { setupTestDatabase } from "../testing/db";
import { makeSchedule } from "../testing/factories";
import { pauseSchedule, resumeSchedule, updateSchedule } from "./mutations";

const T0 = new Date("2030-01-01T10:00:00Z");
const t = setupTestDatabase({ clock: T0 });

type Row = { from: number; to: number; state: string; origin: string; skipReason: string | null; count: number };

async function rowsOf(scheduleId: number): Promise<Row[]> {
  const r = await t.db.execute<{ scheduled_for: string; skipped_until: string | null; state: string; origin: string; skip_reason: string | null; skipped_count: number | null }>(sql`
    SELECT scheduled_for, skipped_until, state, origin, skip_reason, skipped_count FROM runs
    WHERE schedule_id = ${scheduleId} AND slot_seq = 0 ORDER BY scheduled_for`);
  return r.rows.map((x) => ({
    from: new Date(x.scheduled_for).getTime(),
    to: new Date(x.skipped_until ?? x.scheduled_for).getTime(),
    state: x.state,
    origin: x.origin,
    skipReason: x.skip_reason,
    count: x.skipped_count ?? 1,
  }));
}

/** One second of a worker: tick (horizon 4 s), then claim and finish every run that is due. */
async function liveSecond() {
  await tickOnce(t.db, { partitions: null, horizonSeconds: 4, graceSeconds: 30 });
  for (;;) {
    const claimed = await claimRuns(t.db, { workerId: "w1", partitions: null, limit: 100 });
    if (claimed.length === 0) break;
    await finishRuns(t.db, "w1", claimed.map((c) => ({ id: c.id, attempt: c.attempt, outcome: "succeeded" as const, durationMs: 1 })));
  }
  await advanceClock(t.pool, 1000);
}
async function live(seconds: number) {
  for (let i = 0; i < seconds; i++) await liveSecond();
}

// The oracle's grids, whole seconds only (every timing here fires on whole seconds).
type Grid = (ms: number) => boolean;
const every = (n: number): Grid => (ms) => ms % 1000 === 0 && (ms / 1000) % n === 0;
/** A seconds cron "a-b/s" or "*\/s" (the zones used here are whole minutes off UTC, so zone-free). */
const cronSeconds = (field: string): Grid => {
  const m = /^(?:\*|(\d+)-(\d+))\/(\d+)$/.exec(field)!;
  const [lo, hi, step] = [m[1] ? Number(m[1]) : 0, m[2] ? Number(m[2]) : 59, Number(m[3])];
  return (ms) => ms % 1000 === 0 && ((s) => s >= lo && s <= hi && (s - lo) % step === 0)((ms / 1000) % 60);
};
const slotsIn = (g: Grid, from: number, to: number) => {
  const out: number[] = [];
  for (let s = Math.ceil(from / 1000) * 1000; s <= to; s += 1000) if (g(s)) out.push(s);
  return out;
};
const hms = (ms: number) => new Date(ms).toISOString().slice(11, 19);

/**
 * The rule (docs/schedules.md, "Edit"): each instant of schedule time is covered by at most one
 * row, and a timing edit's new slots start at the first new slot at or after the later of sk_now()
 * and the end of the schedule time the schedule's rows already cover. Checks, by the oracle:
 * rows cover disjoint stretches of schedule time; a range row counts exactly the slots of the grid
 * that wrote it; no row of the new grid at or before `coveredUntil`; and every new-grid slot after
 * it up to `checkTo` has its row.
 */
function judge(rows: Row[], o: { oldGrid: Grid; newGrid: Grid; editAt: number; coveredUntil: number; checkTo: number }) {
  const overlaps: string[] = [];
  for (let i = 1; i < rows.length; i++) if (rows[i].from <= rows[i - 1].to) overlaps.push(`${hms(rows[i - 1].from)}..${hms(rows[i - 1].to)} and ${hms(rows[i].from)}..${hms(rows[i].to)}`);
  expect(overlaps, "rows covering the same schedule time").toEqual([]);
  for (const r of rows) {
    const grid = r.from <= o.coveredUntil ? o.oldGrid : o.newGrid;
    expect(grid(r.from) && grid(r.to), `row ${hms(r.from)}..${hms(r.to)} on its grid`).toBe(true);
    expect(slotsIn(grid, r.from, r.to).length, `row ${hms(r.from)}..${hms(r.to)} counts its slots`).toBe(r.count);
  }
  const after = rows.filter((r) => r.from > o.coveredUntil).map((r) => r.from);
  const expected = slotsIn(o.newGrid, Math.max(o.editAt, o.coveredUntil + 1), o.checkTo);
  expect(after.filter((x) => x <= o.checkTo).map(hms)).toEqual(expected.map(hms));
}

/**
 * Live 10:00:00–10:00:09, step +20 s, live 10:00:30–10:00:39, step −20 s: the clock reads 10:00:20,
 * slots up to 10:00:39 ran and those up to 10:00:43 are written.
 */
async function stepForwardThenBack(): Promise<void> {
  await live(10);
  await advanceClock(t.pool, 20_000);
  await live(10);
  await advanceClock(t.pool, -20_000);
}

/** The end of the schedule time the rows cover after the edit withdrew the waiting ones. */
const lastCovered = (rows: Row[]) => Math.max(...rows.map((r) => r.to));

const cases = [
  { name: "every 2 s -> cron */2 (the same grid)", from: { everySeconds: 2 }, oldGrid: every(2), patch: { cron: "*/2 * * * * *" }, newGrid: cronSeconds("*/2") },
  { name: "every 2 s -> every 3 s", from: { everySeconds: 2 }, oldGrid: every(2), patch: { everySeconds: 3 }, newGrid: every(3) },
  { name: "every 3 s -> cron 1-59/4", from: { everySeconds: 3 }, oldGrid: every(3), patch: { cron: "1-59/4 * * * * *" }, newGrid: cronSeconds("1-59/4") },
  { name: "cron */3 in UTC -> Asia/Kolkata", from: { cron: "*/3 * * * * *", timezone: "UTC" }, oldGrid: every(3), patch: { timezone: "Asia/Kolkata" }, newGrid: cronSeconds("*/3") },
] as const;

describe("a timing edit in the re-lived interval after the clock stepped back", () => {
  for (const policy of ["skip", "latest", "all"] as const) {
    for (const c of cases) {
      it(`${c.name}, catch-up ${policy}: no slot time gets a second row`, async () => {
        await setClock(t.pool, T0);
        const s = await makeSchedule(t.db, { ...c.from, catchUp: policy });
        await stepForwardThenBack();
        const editAt = (await dbNow(t.pool)).getTime();
        await updateSchedule(t.db, s.name, c.patch, s.version, SYSTEM_ACTOR);
        const coveredUntil = lastCovered(await rowsOf(s.id));
        // Schedule time reached 10:00:39 before the step back and every slot up to it ran; the
        // edit withdrew the written ones after it.
        expect(hms(coveredUntil)).toBe(hms(slotsIn(c.oldGrid, T0.getTime(), T0.getTime() + 39_000).at(-1)!));
        await live(40);
        const rows = await rowsOf(s.id);
        judge(rows, { oldGrid: c.oldGrid, newGrid: c.newGrid, editAt, coveredUntil, checkTo: (await dbNow(t.pool)).getTime() - 5000 });
        const now = (await dbNow(t.pool)).getTime();
        expect(rows.filter((r) => r.state === "pending" && r.from < now - 5000)).toEqual([]);
      });
    }
  }

  it("a timing edit with no step back starts at the first new slot at or after sk_now()", async () => {
    await setClock(t.pool, T0);
    const s = await makeSchedule(t.db, { everySeconds: 2 });
    await live(11); // 10:00:11; slots up to 10:00:14 written, 10:00:12 and 10:00:14 waiting
    const editAt = (await dbNow(t.pool)).getTime();
    await updateSchedule(t.db, s.name, { everySeconds: 3 }, s.version, SYSTEM_ACTOR);
    const coveredUntil = lastCovered(await rowsOf(s.id));
    expect(hms(coveredUntil)).toBe("10:00:10");
    await live(20);
    judge(await rowsOf(s.id), { oldGrid: every(2), newGrid: every(3), editAt, coveredUntil, checkTo: editAt + 15_000 });
    expect(hms((await rowsOf(s.id)).find((r) => r.from > coveredUntil)!.from)).toBe("10:00:12");
  });

  it("a timing edit while paused in the re-lived interval starts after the covered time too", async () => {
    await setClock(t.pool, T0);
    const s = await makeSchedule(t.db, { everySeconds: 2, catchUp: "skip" });
    await stepForwardThenBack();
    const paused = await pauseSchedule(t.db, s.name, SYSTEM_ACTOR);
    await live(2);
    const editAt = (await dbNow(t.pool)).getTime();
    const edited = await updateSchedule(t.db, s.name, { everySeconds: 3 }, paused.version, SYSTEM_ACTOR);
    const coveredUntil = lastCovered(await rowsOf(s.id));
    expect(hms(coveredUntil)).toBe("10:00:38");
    expect(hms(edited.nextSlotAt.getTime())).toBe("10:00:39");
    await live(2);
    await resumeSchedule(t.db, s.name, SYSTEM_ACTOR);
    await live(36);
    judge(await rowsOf(s.id), { oldGrid: every(2), newGrid: every(3), editAt, coveredUntil, checkTo: (await dbNow(t.pool)).getTime() - 5000 });
  });

  it("pause and resume in the re-lived interval write no slot time twice", async () => {
    await setClock(t.pool, T0);
    const s = await makeSchedule(t.db, { everySeconds: 2, catchUp: "latest" });
    await stepForwardThenBack();
    await pauseSchedule(t.db, s.name, SYSTEM_ACTOR);
    const coveredUntil = lastCovered(await rowsOf(s.id));
    await live(3);
    await resumeSchedule(t.db, s.name, SYSTEM_ACTOR);
    await live(30);
    const editAt = (await dbNow(t.pool)).getTime();
    judge(await rowsOf(s.id), { oldGrid: every(2), newGrid: every(2), editAt: 0, coveredUntil, checkTo: editAt - 5000 });
  });
});
