// Pause and resume of a schedule whose jitter is longer than its interval (issue #21, promise:
// each slot exists once). With jitter a later slot can be due, and done, before an earlier one:
// a pause then finds the earlier one still waiting, never attempted. Withdrawing it must not
// rewind the schedule to before the later slot that already ran, or the resume's catch-up writes a
// row (a skipped range, a coalesced one) over schedule time that a run already lived.
//
// A worker is simulated second by second (tick, claim what is due, finish it) on a frozen database
// clock the test moves. The oracle is brute-force arithmetic outside the product: the slots of
// "every 1 s" are the whole seconds, and each row covers [scheduled_for, skipped_until].
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { SYSTEM_ACTOR } from "../audit/record";
import { claimRuns } from "../runs/claim";
import { finishRuns } from "../runs/finish";
import { tickOnce } from "../runs/tick";
import { advanceClock, dbNow, setClock } from "../testing/clock";
import { setupTestDatabase } from "../testing/db";
import { makeSchedule } from "../testing/factories";
import { pauseSchedule, resumeSchedule } from "./mutations";

const T0 = new Date("2030-01-01T10:00:00Z");
const t = setupTestDatabase({ clock: T0 });

type Row = { from: number; to: number; state: string; count: number; attempts: number };

async function rowsOf(scheduleId: number): Promise<Row[]> {
  const r = await t.db.execute<{ scheduled_for: string; skipped_until: string | null; state: string; skipped_count: number | null; attempts: number }>(sql`
    SELECT r.scheduled_for, r.skipped_until, s.state, r.skipped_count, s.attempts FROM runs r JOIN run_status s ON s.id = r.id
    WHERE r.schedule_id = ${scheduleId} AND r.slot_seq = 0 ORDER BY r.scheduled_for`);
  return r.rows.map((x) => ({
    from: new Date(x.scheduled_for).getTime(),
    to: new Date(x.skipped_until ?? x.scheduled_for).getTime(),
    state: x.state,
    count: x.skipped_count ?? 1,
    attempts: x.attempts,
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

const hms = (ms: number) => new Date(ms).toISOString().slice(11, 19);
const wholeSeconds = (from: number, to: number) => {
  const out: number[] = [];
  for (let s = Math.ceil(from / 1000) * 1000; s <= to; s += 1000) out.push(s);
  return out;
};

describe("pause and resume when the jitter is longer than the interval", () => {
  for (const policy of ["skip", "latest", "all"] as const) {
    it(`catch-up ${policy}: every slot time is covered by one row, none over a slot that ran`, async () => {
      await setClock(t.pool, T0);
      const s = await makeSchedule(t.db, { name: `jitter-${policy}`, everySeconds: 1, jitterSeconds: 4, catchUp: policy });
      // Live until a slot waits, never attempted, behind a later slot that is done: the case.
      let inverted = false;
      for (let i = 0; i < 40 && !inverted; i++) {
        await liveSecond();
        const rows = await rowsOf(s.id);
        const lastDone = Math.max(...rows.filter((r) => r.state === "done").map((r) => r.from));
        inverted = rows.some((r) => r.state === "pending" && r.attempts === 0 && r.from < lastDone);
      }
      expect(inverted, "a waiting slot behind a done one (jitter 4 s over every 1 s)").toBe(true);
      const before = await rowsOf(s.id);
      const ranBefore = before.filter((r) => r.state === "done").map((r) => r.from);
      await pauseSchedule(t.db, s.name, SYSTEM_ACTOR);
      await advanceClock(t.pool, 10_000);
      await resumeSchedule(t.db, s.name, SYSTEM_ACTOR);
      for (let i = 0; i < 20; i++) await liveSecond();

      const rows = await rowsOf(s.id);
      // The slots that ran before the pause are still the rows of their own instants, done once.
      for (const at of ranBefore) expect(rows.filter((r) => r.from <= at && at <= r.to).map((r) => `${hms(r.from)}..${hms(r.to)} ${r.state}`), `slot ${hms(at)}`).toEqual([`${hms(at)}..${hms(at)} done`]);
      // Rows cover disjoint stretches of schedule time, each counting the whole seconds it covers.
      const overlaps: string[] = [];
      for (let i = 1; i < rows.length; i++) if (rows[i].from <= rows[i - 1].to) overlaps.push(`${hms(rows[i - 1].from)}..${hms(rows[i - 1].to)} and ${hms(rows[i].from)}..${hms(rows[i].to)}`);
      expect(overlaps, "rows covering the same schedule time").toEqual([]);
      for (const r of rows) expect(wholeSeconds(r.from, r.to).length, `row ${hms(r.from)}..${hms(r.to)} counts its slots`).toBe(r.count);
      // And every slot up to a few seconds ago has its row: nothing fell between them.
      const checkTo = (await dbNow(t.pool)).getTime() - 6_000;
      const covered = (at: number) => rows.some((r) => r.from <= at && at <= r.to);
      expect(wholeSeconds(T0.getTime(), checkTo).filter((at) => !covered(at)).map(hms), "slots with no row").toEqual([]);
      // Catch-up all: every slot runs, the one that waited at the pause and those the pause missed.
      if (policy === "all") expect(rows.filter((r) => r.from <= checkTo && (r.state !== "done" || r.count !== 1)).map((r) => `${hms(r.from)}..${hms(r.to)} ${r.state}`)).toEqual([]);
    });
  }
});
