// Database clock steps: Slotkeeper's one clock is sk_now() (now() plus sk_clock's shift, see
// lib/testing/clock.ts). The suite steps it forward (every lease expires at once; the slots of the
// skipped interval come due at once and, with catch-up `all`, must all run) and back again (the
// interval is lived through a second time on the database clock; its slots exist already and must
// not run twice). What each step implies is computed here with the oracle's own slot rule.
import type pg from "pg";
import { slotsOf, type OracleRun, type OracleSchedule } from "./oracle";

/** One step, on this process's clock; `dbBefore`/`dbAfter` are sk_now() around it. */
export type ClockStep = { at: number; stepMs: number; dbBefore: number; dbAfter: number };

/** Shift the database clock by `stepMs` (positive: forward). */
export async function stepClock(pool: pg.Pool, stepMs: number): Promise<ClockStep> {
  const at = Date.now();
  const r = await pool.query<{ before: number; after: number }>(
    `UPDATE sk_clock SET shift = shift + make_interval(secs => $1::float8 / 1000) WHERE id = 1
     RETURNING (extract(epoch FROM now() + shift - make_interval(secs => $1::float8 / 1000)) * 1000)::float8 AS before,
       (extract(epoch FROM now() + shift) * 1000)::float8 AS after`,
    [stepMs],
  );
  return { at, stepMs, dbBefore: r.rows[0].before, dbAfter: r.rows[0].after };
}

/**
 * What the database clock read over [from, to] of this process's clock, less the measured offset:
 * [least, greatest] of t + (the steps made by t). A schedule created, or paused, while the clock
 * stood ahead starts (or skips) from the database's time, not ours.
 */
export function dbSpan(steps: ClockStep[], from: number, to: number): [number, number] {
  const shiftAt = (t: number) => steps.filter((s) => s.at <= t).reduce((n, s) => n + s.stepMs, 0);
  let lo = from + shiftAt(from);
  let hi = to + shiftAt(to);
  for (const s of steps) {
    if (s.at < from || s.at > to) continue;
    // Just before a step back the clock stood at its highest; just after a step forward too.
    hi = Math.max(hi, s.at + shiftAt(s.at - 1), s.at + shiftAt(s.at));
    lo = Math.min(lo, s.at + shiftAt(s.at));
  }
  return [lo, hi];
}

/**
 * Windows (this process's clock) in which other checks must allow for a step: from a forward step
 * until a lease after the step back (leases taken in between end `stepMs` later in real time).
 */
export function clockStepWindows(steps: ClockStep[], leaseMs: number): { from: number; to: number; extraMs: number }[] {
  const out: { from: number; to: number; extraMs: number }[] = [];
  for (let i = 0; i < steps.length; i++) {
    const s = steps[i];
    if (s.stepMs <= 0) continue;
    const back = steps.slice(i + 1).find((x) => x.stepMs < 0);
    out.push({ from: s.at - leaseMs - 1000, to: (back?.at ?? s.at) + leaseMs + 1000, extraMs: s.stepMs });
  }
  return out;
}

/**
 * What each step implied, against the runs after the drain:
 * - forward: every slot of the skipped interval (dbBefore, dbAfter] exists and started within
 *   `boundMs` of the step (they came due at once);
 * - back: every slot of the interval lived twice (dbAfter, dbBefore] exists once and succeeded once.
 * `lagOf` gives each run that started its wait in real time: its first claim minus the instant it
 * came due (timed-report.ts).
 */
export async function checkClockSteps(pool: pg.Pool, steps: ClockStep[], schedules: OracleSchedule[], runs: OracleRun[], boundMs: number, lagOf: Map<number, number>) {
  const successes = new Map(
    (await pool.query<{ id: number; ok: number }>(`SELECT run_id::int AS id, count(*) FILTER (WHERE outcome = 'succeeded')::int AS ok FROM run_attempts GROUP BY run_id`)).rows.map((r) => [r.id, r.ok]),
  );
  const bySlot = new Map<string, OracleRun[]>();
  for (const r of runs) if (r.origin !== "manual") bySlot.set(`${r.scheduleId}@${r.scheduledFor}`, [...(bySlot.get(`${r.scheduleId}@${r.scheduledFor}`) ?? []), r]);
  const out = [];
  for (const s of steps) {
    const [lo, hi] = s.stepMs > 0 ? [s.dbBefore, s.dbAfter] : [s.dbAfter, s.dbBefore];
    let slots = 0;
    let missing = 0;
    let late = 0;
    let twice = 0;
    const examples: string[] = [];
    for (const sch of schedules) {
      if (sch.optionalWindows.length > 0) continue; // a paused schedule's slots may be skipped
      for (const t of slotsOf(sch, lo + 1, hi)) {
        if (t <= sch.createdWindow[1]) continue;
        slots++;
        const list = bySlot.get(`${sch.id}@${t}`) ?? [];
        const lag = list[0] && lagOf.get(list[0].id);
        const ok = (list[0] && successes.get(list[0].id)) ?? 0;
        if (list.length === 0 || lag === undefined) {
          missing++;
          examples.push(`${sch.name} ${new Date(t).toISOString()}: missing or never started`);
        } else if (list.length > 1 || ok > 1) {
          twice++;
          examples.push(`${sch.name} ${new Date(t).toISOString()}: ${list.length} runs, ${ok} successes`);
        } else if (s.stepMs > 0 && lag > boundMs) {
          late++;
          examples.push(`${sch.name} ${new Date(t).toISOString()}: started ${Math.round(lag)} ms after the step`);
        }
      }
    }
    out.push({ step_ms: s.stepMs, at: new Date(s.at).toISOString(), slots_in_interval: slots, missing, started_late: late, run_twice: twice, examples: examples.slice(0, 3) });
  }
  return { steps: out, bound_ms: boundMs, failures: out.reduce((n, x) => n + x.missing + x.started_late + x.run_twice, 0) };
}
