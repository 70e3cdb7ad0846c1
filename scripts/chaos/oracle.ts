// The independent oracle: which slots must exist, computed here from the schedule's timing and
// what the chaos run asked of the API — never from Slotkeeper's own slot code or stored
// high-water marks. Intervals: slot k is at k * everySeconds after the Unix epoch (the documented
// rule, docs/schedules.md). Cron: croner directly. Catch-up is "all" and max lateness unset for every chaos
// schedule, so every slot from creation to the cut must exist exactly once.
import { Cron } from "croner";

/** What the chaos run knows about one schedule, independent of Slotkeeper. */
export type OracleSchedule = {
  id: number;
  name: string;
  everySeconds?: number;
  cron?: string;
  timezone?: string;
  /** The create call's [start, end]: slots before start are unexpected, slots inside are optional. */
  createdWindow: [number, number];
  /** Periods (pause … acknowledged resume, with slack) where a slot may be absent or skipped. */
  optionalWindows: [number, number][];
  /** The state every required slot must end in: "done" (sql-ledger) or "dead" (fail handler). */
  finalState: "done" | "dead";
};

/** A run row as the checks read it (times in ms). */
export type OracleRun = {
  id: number;
  scheduleId: number;
  scheduledFor: number;
  state: string;
  origin: string;
  skipReason: string | null;
  lastError: string | null;
  skippedUntil: number | null;
};

export type OracleResult = {
  expectedSlots: number;
  missingSlots: { schedule: string; slot: string }[];
  duplicateSlots: { schedule: string; slot: string; count: number }[];
  unexpectedSlots: { schedule: string; slot: string; why: string }[];
  /** Required slots that exist but ended in another state than the schedule's final state. */
  wrongFinalState: { schedule: string; slot: string; state: string }[];
};

/** All slots of a schedule in [from, to], ascending, by the documented rule (not Slotkeeper's code). */
export function slotsOf(s: Pick<OracleSchedule, "everySeconds" | "cron" | "timezone">, from: number, to: number): number[] {
  const out: number[] = [];
  if (s.everySeconds) {
    const p = s.everySeconds * 1000;
    for (let t = Math.ceil(from / p) * p; t <= to; t += p) out.push(t);
    return out;
  }
  const cron = new Cron(s.cron!, { timezone: s.timezone ?? "UTC", paused: true });
  let next = cron.nextRun(new Date(from - 1));
  while (next && next.getTime() <= to && out.length < 1_000_000) {
    out.push(next.getTime());
    next = cron.nextRun(next);
  }
  return out;
}

const iso = (ms: number) => new Date(ms).toISOString();
const inAny = (t: number, windows: [number, number][]) => windows.some(([a, b]) => t >= a && t <= b);

/**
 * Compare the runs with the slots that must exist up to `cutAt`. Slots after the cut may exist
 * (the tick materialises ahead) but must still be on the grid and unique.
 */
export function checkSlots(schedules: OracleSchedule[], runs: OracleRun[], cutAt: number): OracleResult {
  const result: OracleResult = { expectedSlots: 0, missingSlots: [], duplicateSlots: [], unexpectedSlots: [], wrongFinalState: [] };
  const bySchedule = new Map<number, OracleRun[]>();
  for (const r of runs) {
    if (r.origin === "manual") continue; // manual runs are extra by design and not slots
    const list = bySchedule.get(r.scheduleId) ?? [];
    list.push(r);
    bySchedule.set(r.scheduleId, list);
  }
  for (const s of schedules) {
    const mine = bySchedule.get(s.id) ?? [];
    bySchedule.delete(s.id);
    const [createdFrom, createdTo] = s.createdWindow;
    const lastRun = Math.max(cutAt, ...mine.map((r) => r.skippedUntil ?? r.scheduledFor));
    const grid = new Set(slotsOf(s, createdFrom - 1000, lastRun));
    // A skipped row may stand for a range of slots: expand it onto the grid.
    const seen = new Map<number, OracleRun[]>();
    for (const r of mine) {
      const covered = r.skippedUntil ? slotsOf(s, r.scheduledFor, r.skippedUntil) : [r.scheduledFor];
      if (!grid.has(r.scheduledFor)) {
        result.unexpectedSlots.push({ schedule: s.name, slot: iso(r.scheduledFor), why: r.scheduledFor < createdFrom ? "before the schedule was created" : "not on the schedule's timing" });
      }
      for (const t of covered) seen.set(t, [...(seen.get(t) ?? []), r]);
    }
    for (const [t, list] of seen) {
      if (list.length > 1) result.duplicateSlots.push({ schedule: s.name, slot: iso(t), count: list.length });
      if (t < createdFrom - 1000) result.unexpectedSlots.push({ schedule: s.name, slot: iso(t), why: "before the schedule was created" });
    }
    for (const t of grid) {
      if (t <= createdTo || t > cutAt || inAny(t, s.optionalWindows)) continue;
      result.expectedSlots++;
      const list = seen.get(t);
      if (!list) result.missingSlots.push({ schedule: s.name, slot: iso(t) });
      else if (list[0].state !== s.finalState) result.wrongFinalState.push({ schedule: s.name, slot: iso(t), state: list[0].state });
    }
  }
  for (const [id, list] of bySchedule) {
    for (const r of list) result.unexpectedSlots.push({ schedule: `#${id}`, slot: iso(r.scheduledFor), why: "schedule the chaos run never created" });
  }
  return result;
}
