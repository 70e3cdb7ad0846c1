// The oracle for schedules whose timing and policies are edited during the run (the timing edits
// of scripts/chaos/timing-edits.ts). Independent of Slotkeeper's code: grids come from slotsOf
// (scripts/chaos/oracle.ts: the epoch rule and croner), and the rules below are docs/schedules.md's,
// restated.
//
// An edit takes effect at the database time it commits (its sk_now()), which the run knows only to
// lie inside the call's window [sent, acknowledged]. So for each schedule the expected slots follow
// the acknowledged edits in order:
// - between two edits, exactly the slots of the state in force (timing, catch-up, max lateness,
//   enabled) must exist, each once;
// - inside an edit's window either state's slots may exist: a slot at or after the commit belongs
//   to the new timing ("the first new slot at or after sk_now()"), one before it to the old; a slot
//   exactly at the commit time is the new timing's;
// - an old-timing slot due shortly before a timing edit or a pause (within `boundaryMs`, the
//   stated start bound) may have been still waiting, and the edit withdraws waiting slots: optional;
// - a slot due while the schedule was certainly paused must exist after the resume (run or
//   skipped), and its fate follows the policy in force at the resume: with max lateness M a slot
//   older than M when the resume committed is skipped too_late; otherwise one whose successor was
//   already due is missed: `skip` records it skipped (missed), `latest` coalesces it (skipped,
//   coalesced), `all` runs it;
// - outside a pause a slot runs, or is skipped by the policy that judged it: the one in force at
//   its due time, or, for a slot still waiting when the next edit committed, the next one's;
// - with max lateness M in force, no first attempt starts more than M after its slot.
import { slotsOf } from "./oracle";

export type Timing = { everySeconds?: number; cron?: string; timezone?: string };
export type Policy = { catchUp: "skip" | "latest" | "all"; maxLatenessSeconds: number | null };
/** What a schedule is at one moment, as far as its slots go. */
export type TimedState = Timing & Policy & { enabled: boolean };
/** One change the run asked for: its window (database clock) and whether it was acknowledged. */
export type TimedEdit = { window: [number, number]; acked: boolean; change: Partial<TimedState> };
export type TimedSchedule = {
  id: number;
  name: string;
  createdWindow: [number, number];
  initial: TimedState;
  /** In the order they were sent; windows do not overlap (one change at a time per schedule). */
  edits: TimedEdit[];
  finalState: "done" | "dead";
};
export type TimedRun = { scheduleId: number; scheduledFor: number; state: string; origin: string; skipReason: string | null; skippedUntil: number | null; firstStartedAt: number | null };
export type TimedOptions = {
  cutAt: number;
  /** A slot due this long before a timing edit or pause may still have been waiting when it committed. */
  boundaryMs: number;
  /** Database clock windows (outage + allowance, clock steps) where nothing is required and fates are not judged. */
  unsure: [number, number][];
  /** Clock slack between this process's windows and the database's commit times. */
  slackMs: number;
};
export type TimedResult = {
  expectedSlots: number;
  missing: { schedule: string; slot: string }[];
  unexpected: { schedule: string; slot: string; why: string }[];
  duplicate: { schedule: string; slot: string; count: number }[];
  wrongFinalState: { schedule: string; slot: string; state: string }[];
  /** A paused slot whose fate is not the one its policy gives. */
  policyViolations: { schedule: string; slot: string; policy: string; expected: string; got: string }[];
  /** A first attempt that started later than the max lateness in force. */
  tooLateStarts: { schedule: string; slot: string; lateMs: number; maxLatenessSeconds: number }[];
  /** Paused slots whose fate the policy decided and that were judged against it. */
  fatesJudged: number;
  /** Slots outside a pause that were skipped for a reason their policy gives (late past their successor or max lateness). */
  skippedByPolicy: number;
  /** Schedules whose last change was never acknowledged: checked only for duplicates from then. */
  unknownFrom: { schedule: string; at: string }[];
};

const iso = (ms: number) => new Date(ms).toISOString();
const timingChanged = (c: Partial<TimedState>) => "everySeconds" in c || "cron" in c || "timezone" in c;

/** Apply a change: switching to cron drops the interval and the other way round. */
export function applyChange(s: TimedState, c: Partial<TimedState>): TimedState {
  const next = { ...s, ...c };
  if (c.cron !== undefined) delete next.everySeconds;
  if (c.everySeconds !== undefined) delete next.cron;
  return next;
}

/** The period each state is certainly in force: [from, to) with the edit windows between them. */
type Period = { state: TimedState; from: number; to: number; endsBy: TimedEdit | null };

export function periodsOf(s: TimedSchedule): { periods: Period[]; unknownFrom: number | null } {
  const periods: Period[] = [];
  let state = s.initial;
  let from = s.createdWindow[1];
  for (const e of s.edits) {
    periods.push({ state, from, to: e.window[0], endsBy: e });
    if (!e.acked) return { periods, unknownFrom: e.window[0] };
    state = applyChange(state, e.change);
    from = e.window[1];
  }
  periods.push({ state, from, to: Infinity, endsBy: null });
  return { periods, unknownFrom: null };
}

/** Check one edited schedule's runs against the slots its acknowledged edits call for. */
export function checkTimed(schedules: TimedSchedule[], runs: TimedRun[], o: TimedOptions): TimedResult {
  const out: TimedResult = { expectedSlots: 0, fatesJudged: 0, skippedByPolicy: 0, missing: [], unexpected: [], duplicate: [], wrongFinalState: [], policyViolations: [], tooLateStarts: [], unknownFrom: [] };
  const inUnsure = (a: number, b = a) => o.unsure.some(([x, y]) => a <= y && b >= x);
  for (const s of schedules) {
    const mine = runs.filter((r) => r.scheduleId === s.id && r.origin !== "manual");
    const { periods, unknownFrom } = periodsOf(s);
    if (unknownFrom !== null) out.unknownFrom.push({ schedule: s.name, at: iso(unknownFrom) });
    const end = unknownFrom ?? Math.max(o.cutAt, ...mine.map((r) => r.skippedUntil ?? r.scheduledFor)) + 1;
    // Each period's grid, widened by the slack and by the edit windows on both sides.
    const grids = periods.map((p, k) => {
      const lo = (k === 0 ? s.createdWindow[0] : periods[k - 1].endsBy!.window[0]) - o.slackMs;
      const hi = Math.min(p.endsBy ? p.endsBy.window[1] : Infinity, end) + o.slackMs;
      return { p, lo, hi, slots: new Set(slotsOf(p.state, lo, hi)) };
    });
    const gridAt = (t: number) => grids.filter((g) => t >= g.lo && t <= g.hi && g.slots.has(t));

    // Every row, expanded onto the grid it belongs to when it stands for a skipped range.
    const seen = new Map<number, TimedRun[]>();
    for (const r of mine) {
      if (unknownFrom !== null && r.scheduledFor > unknownFrom + o.slackMs) {
        seen.set(r.scheduledFor, [...(seen.get(r.scheduledFor) ?? []), r]);
        continue;
      }
      let on = gridAt(r.scheduledFor);
      // A slot in a clock step's window is on schedule time lived twice: edits of both passes have
      // database times there, so the periods' order in time is lost. It may be any timing whose
      // period reaches into that window.
      if (on.length === 0) on = relivedGridsAt(periods, r.scheduledFor, o);
      if (on.length === 0) {
        out.unexpected.push({ schedule: s.name, slot: iso(r.scheduledFor), why: r.scheduledFor < s.createdWindow[0] ? "before the schedule was created" : "not on the timing in force at that time" });
        seen.set(r.scheduledFor, [...(seen.get(r.scheduledFor) ?? []), r]);
        continue;
      }
      // A range is expanded on the grid it was written on: one where both its ends are slots (near
      // an edit two grids overlap in time, and the first may be the other timing's).
      const home = r.skippedUntil ? (on.find((g) => slotsOf(g.p.state, r.skippedUntil!, r.skippedUntil!).length === 1) ?? on[0]) : on[0];
      const covered = r.skippedUntil ? slotsOf(home.p.state, r.scheduledFor, r.skippedUntil) : [r.scheduledFor];
      for (const t of covered) seen.set(t, [...(seen.get(t) ?? []), r]);
    }
    for (const [t, list] of seen) if (list.length > 1) out.duplicate.push({ schedule: s.name, slot: iso(t), count: list.length });

    for (let k = 0; k < periods.length; k++) {
      const p = periods[k];
      const from = p.from + o.slackMs;
      const next = p.endsBy;
      // Waiting slots are withdrawn by a timing edit or a pause: the last boundaryMs before it are optional.
      const withdrawnFrom = next && (timingChanged(next.change) || next.change.enabled === false) ? p.to - o.boundaryMs : p.to;
      const to = Math.min(p.to - o.slackMs, withdrawnFrom, o.cutAt, end);
      if (to <= from) continue;
      const grid = slotsOf(p.state, from, to);
      // The resume that ends a pause decides the fate of the slots due during it.
      const resume = !p.state.enabled && next?.change.enabled === true ? next : null;
      for (const t of grid) {
        if (inUnsure(t - o.boundaryMs, t + o.boundaryMs)) continue;
        if (!p.state.enabled && !resume) continue;
        out.expectedSlots++;
        const list = seen.get(t);
        if (!list) {
          out.missing.push({ schedule: s.name, slot: iso(t) });
          continue;
        }
        const row = list[0];
        if (!resume) {
          // Outside a pause a slot runs, unless it waited past its successor (load, a fault: the
          // policy's skip) or past max lateness; under "all" without max lateness it always runs.
          // A slot is judged by the policy in force when it is judged: one still waiting when the
          // next edit committed may follow the next period's.
          const skips = [...policySkips(p.state), ...(periods[k + 1] ? policySkips(periods[k + 1].state) : [])];
          if (row.state === "skipped" && row.skipReason !== null && skips.includes(row.skipReason)) out.skippedByPolicy++;
          else if (row.state !== s.finalState) out.wrongFinalState.push({ schedule: s.name, slot: iso(t), state: row.state === "skipped" ? `skipped ${row.skipReason}` : row.state });
          continue;
        }
        if (inUnsure(t, resume.window[1])) continue;
        const fate = expectedFate(p.state, t, grid, resume.window, o.slackMs);
        if (fate === null) continue;
        out.fatesJudged++;
        const ran = row.state !== "skipped";
        const got = ran ? row.state : `skipped ${row.skipReason}`;
        const ok = fate === "ran" ? row.state === s.finalState : !ran && (fate === row.skipReason || (fate === "missed_or_too_late" && (row.skipReason === "too_late" || row.skipReason === (p.state.catchUp === "skip" ? "missed" : "coalesced"))));
        if (!ok) out.policyViolations.push({ schedule: s.name, slot: iso(t), policy: `${p.state.catchUp}${p.state.maxLatenessSeconds ? `, max lateness ${p.state.maxLatenessSeconds} s` : ""}`, expected: fate, got });
      }
    }

    // Max lateness: a first attempt starts within it, whatever else happened (outages included).
    for (const r of mine) {
      if (r.firstStartedAt === null || r.origin === "backfill") continue;
      if (unknownFrom !== null && r.scheduledFor > unknownFrom) continue;
      const states = [...grids.filter((g) => r.scheduledFor >= g.lo && r.scheduledFor <= g.hi).map((g) => g.p.state), ...grids.filter((g) => r.firstStartedAt! >= g.lo && r.firstStartedAt! <= g.hi).map((g) => g.p.state)];
      if (states.length === 0 || states.some((x) => x.maxLatenessSeconds === null)) continue;
      const max = Math.max(...states.map((x) => x.maxLatenessSeconds!));
      const late = r.firstStartedAt - r.scheduledFor;
      if (late > max * 1000) out.tooLateStarts.push({ schedule: s.name, slot: iso(r.scheduledFor), lateMs: Math.round(late), maxLatenessSeconds: max });
    }
  }
  return out;
}

/**
 * The grids a slot `t` inside one of `o.unsure`'s windows may be on: each period whose span (its
 * ends in either order: across a step back a period can end at an earlier database time than it
 * began) meets that window and whose timing has a slot at `t`.
 */
function relivedGridsAt(periods: Period[], t: number, o: TimedOptions) {
  const out: { p: Period; lo: number; hi: number; slots: Set<number> }[] = [];
  for (const [x, y] of o.unsure) {
    if (t < x || t > y) continue;
    for (const p of periods) {
      const lo = Math.min(p.from, p.to) - o.slackMs;
      const hi = Math.max(p.from, p.to) + o.slackMs;
      if (hi < x || lo > y || slotsOf(p.state, t, t).length !== 1) continue;
      out.push({ p, lo: t, hi: t, slots: new Set([t]) });
    }
  }
  return out;
}

/** The skip reasons a state's policy can give a slot that was due while the schedule was live. */
export function policySkips(s: Policy): string[] {
  return [...(s.catchUp === "skip" ? ["missed"] : s.catchUp === "latest" ? ["coalesced"] : []), ...(s.maxLatenessSeconds !== null ? ["too_late"] : [])];
}

/**
 * What must become of slot `t`, due while its schedule was paused, when the resume committed
 * somewhere in `[r0, r1]`: "ran", a skip reason, "missed_or_too_late", or null when the window
 * leaves it open. `grid` is the paused period's slots (for the successor).
 */
export function expectedFate(state: TimedState, t: number, grid: number[], [r0, r1]: [number, number], slackMs: number): string | null {
  const successor = grid.find((x) => x > t) ?? slotsOf(state, t + 1, t + 86_400_000 * 2)[0];
  const graceMs = 30_000;
  // Missed for certain: its successor was due, or it was older than the grace, before the resume.
  const missed = (successor !== undefined && successor < r0 - slackMs) || t < r0 - graceMs - slackMs;
  if (!missed) return null;
  const M = state.maxLatenessSeconds;
  // The tick decides when it writes the slot, at or a little after the resume.
  const tooLateSurely = M !== null && t < r0 - M * 1000 - slackMs;
  const tooLateMaybe = M !== null && t < r1 + 5000 + slackMs - M * 1000;
  if (tooLateSurely) return "too_late";
  if (state.catchUp === "all") return tooLateMaybe ? null : "ran";
  if (tooLateMaybe) return "missed_or_too_late";
  return state.catchUp === "skip" ? "missed" : "coalesced";
}
