// Timing edits in the mix: a loop that, while the faults happen, edits the timing schedules
// (plan.ts) through the API: cron ↔ interval, time zone, pause/resume, every catch-up policy and
// max lateness, one change at a time per schedule, in a fixed cycle so even the short run has
// each kind on each schedule. Every change is recorded with its window on this process's clock;
// a change that was not acknowledged is sent again (the same change) until it is, so the state
// after it is known. The oracle (timing-oracle.ts) turns the log into the expected slots.
import type { ApiClient } from "./api";
import type { Random } from "./random";
import type { Policy, TimedState, Timing } from "./timing-oracle";

/** One change as sent: window from the first try to the acknowledged (or last) answer. */
export type TimingEditLog = { name: string; window: [number, number]; acked: boolean; change: Partial<TimedState> };

const CYCLE = ["pause", "resume", "retime", "timezone", "policy", "pause", "resume", "lateness", "retime", "policy"] as const;
const INTERVALS = [2, 3];
const CRONS = ["*/3 * * * * *", "*/2 * * * * *", "1-59/4 * * * * *"];
const ZONES = ["UTC", "Europe/London", "Asia/Kolkata", "America/New_York", "Australia/Lord_Howe"];
const POLICIES: Policy["catchUp"][] = ["skip", "latest", "all"];
/** Max lateness when it is on: shorter than a pause, longer than the stated start bound. */
export const TIMING_MAX_LATENESS_SECONDS = 6;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The next change for a schedule in state `s` at step `k` of its cycle. */
export function nextChange(s: TimedState, k: number, random: Random): Partial<TimedState> {
  const step = CYCLE[k % CYCLE.length];
  if (step === "pause") return { enabled: false };
  if (step === "resume") return { enabled: true };
  if (step === "retime") return s.cron ? { everySeconds: random.pick(INTERVALS) } : { cron: random.pick(CRONS) };
  if (step === "timezone") return { timezone: random.pick(ZONES.filter((z) => z !== (s.timezone ?? "UTC"))) };
  if (step === "policy") return { catchUp: POLICIES[(POLICIES.indexOf(s.catchUp) + 1) % POLICIES.length] };
  return { maxLatenessSeconds: s.maxLatenessSeconds === null ? TIMING_MAX_LATENESS_SECONDS : null };
}

/** The PATCH body for a change (pause and resume have routes of their own). */
function patchBody(c: Partial<TimedState>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (c.everySeconds !== undefined) body.everySeconds = c.everySeconds;
  if (c.cron !== undefined) body.cron = c.cron;
  if (c.timezone !== undefined) body.timezone = c.timezone;
  if (c.catchUp !== undefined) body.catchUp = c.catchUp;
  if ("maxLatenessSeconds" in c) body.maxLatenessSeconds = c.maxLatenessSeconds;
  return body;
}

/**
 * Edit the timing schedules until `deadline`; then resume any that is paused, so the drain sees
 * them live. Returns every change in the order sent.
 */
export async function runTimingEdits(d: { api: ApiClient; random: Random; schedules: { name: string; state: TimedState }[]; log: (l: string) => void }, deadline: number): Promise<TimingEditLog[]> {
  const log: TimingEditLog[] = [];
  const state = new Map(d.schedules.map((s) => [s.name, s.state]));
  const apply = async (name: string, change: Partial<TimedState>) => {
    const entry: TimingEditLog = { name, window: [Date.now(), Date.now()], acked: false, change };
    log.push(entry);
    // Up to 45 s: longer than the console takes to come back after a kill.
    for (let i = 0; i < 100 && !entry.acked && Date.now() < entry.window[0] + 45_000; i++) {
      if (i > 0) await sleep(1000);
      const r =
        change.enabled === false ? await d.api.pause(name) : change.enabled === true ? await d.api.resume(name) : await d.api.patch(name, patchBody(change), `timing ${log.length} ${JSON.stringify(change)}`);
      entry.window[1] = Date.now();
      if (r?.call.acked) entry.acked = true;
    }
    if (!entry.acked) d.log(`chaos: timing edit of ${name} never acknowledged: ${JSON.stringify(change)}`);
    const s = state.get(name)!;
    const next = { ...s, ...change };
    if (change.cron !== undefined) delete next.everySeconds;
    if (change.everySeconds !== undefined) delete next.cron;
    state.set(name, next);
    return entry.acked;
  };
  // One loop per schedule, side by side: each schedule's changes are one at a time, in order.
  const loop = async (name: string) => {
    for (let k = 0; k < 10_000 && Date.now() < deadline - 6000; k++) {
      // A pause lasts long enough for several slots to fall inside it (the policy's cases).
      await sleep(d.random.int(2000, 4000) + (CYCLE[k % CYCLE.length] === "resume" ? 7000 : 0));
      // A schedule whose change was never acknowledged is left alone: its state is unknown.
      if (!(await apply(name, nextChange(state.get(name)!, k, d.random)))) return;
    }
  };
  await Promise.all(d.schedules.map((s) => loop(s.name)));
  for (const [name, s] of state) if (!s.enabled && !log.some((e) => e.name === name && !e.acked)) await apply(name, { enabled: true });
  return log;
}

export type { Timing };
