// One table of worked catch-up cases, run against the real tick (tickOnce) and the real lateness
// pass on PostgreSQL with the database clock moved: every interval from 1 s to hourly and a cron
// across both DST changes; outages shorter than, equal to and far longer than the grace; slots
// written before the outage and slots first seen after it; every policy and max lateness. Each
// case's expected outcome comes from the oracle below, which enumerates slots by arithmetic
// (intervals) or minute by minute through Intl (the cron), not through Slotkeeper's timing code.
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { CatchUpPolicy } from "../db/schema";
import { setClock } from "../testing/clock";
import { createTestDatabase, type TestDatabase } from "../testing/db";
import { makeSchedule } from "../testing/factories";
import { runLatenessPass } from "./lateness-pass";
import { tickOnce } from "./tick";

const GRACE_S = 30;
/** Horizon of the tick before the outage (the largest a worker may use) and after it (the default). */
const HORIZON_BEFORE_S = 600;
const HORIZON_AFTER_S = 120;

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t?.drop();
});
beforeEach(async () => {
  await t.db.execute(sql`TRUNCATE schedules CASCADE`);
});

// ---- The oracle's slots ----------------------------------------------------------------------

type Timing = { everySeconds: number } | { cron: "30 1 * * *"; timezone: "Europe/London" };

const london = new Intl.DateTimeFormat("en-GB", { timeZone: "Europe/London", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", hourCycle: "h23" });
function londonWall(ms: number): { date: string; hm: string } {
  const p = Object.fromEntries(london.formatToParts(new Date(ms)).map((x) => [x.type, x.value]));
  return { date: `${p.year}-${p.month}-${p.day}`, hm: `${p.hour}:${p.minute}` };
}

/**
 * Every slot in [fromMs, toMs], ascending. Interval: k × every after the epoch. "30 1 * * *" in
 * London (a named time, Vixie cron's DST rule): on each local date, the first instant whose wall
 * time is 01:30; on a date where 01:30 does not exist (spring forward), the first instant after
 * the gap. Found by walking every UTC minute and asking Intl for London's wall time.
 */
const slotCache = new Map<string, number[]>();
function slotsOf(timing: Timing, fromMs: number, toMs: number): number[] {
  const key = `${JSON.stringify(timing)}|${fromMs}|${toMs}`;
  let slots = slotCache.get(key);
  if (!slots) slotCache.set(key, (slots = enumerateSlots(timing, fromMs, toMs)));
  return slots;
}

function enumerateSlots(timing: Timing, fromMs: number, toMs: number): number[] {
  if ("everySeconds" in timing) {
    const p = timing.everySeconds * 1000;
    const out: number[] = [];
    for (let k = Math.ceil(fromMs / p); k * p <= toMs; k++) out.push(k * p);
    return out;
  }
  const byDate = new Map<string, number>();
  const afterGap = new Map<string, number>();
  let prev: { date: string; hm: string } | null = null;
  for (let m = Math.floor(fromMs / 60_000) * 60_000 - 86_400_000; m <= toMs + 86_400_000; m += 60_000) {
    const w = londonWall(m);
    if (w.hm === "01:30" && !byDate.has(w.date)) byDate.set(w.date, m);
    // The wall clock jumped over 01:30 between the previous minute and this one.
    if (prev && prev.date === w.date && prev.hm < "01:30" && w.hm > "01:30" && !afterGap.has(w.date)) afterGap.set(w.date, m);
    prev = w;
  }
  for (const [date, m] of afterGap) if (!byDate.has(date)) byDate.set(date, m);
  return [...byDate.values()].filter((m) => m >= fromMs && m <= toMs).sort((a, b) => a - b);
}

/** The index of the first slot >= x. */
function lowerBound(slots: number[], x: number): number {
  let lo = 0;
  let hi = slots.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (slots[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

type Fate = { fate: "run" | "missed" | "coalesced" | "too_late"; origin?: "schedule" | "catch_up"; into?: number };

/**
 * The catch-up rule restated: a due slot found unclaimed at `up` is missed when the next slot is
 * due or it is older than the grace; skip → missed, latest → coalesced into the newest due slot
 * (which runs), all → runs; older than max lateness → too_late. A missed run the tick writes is a
 * catch_up run; one written before the outage keeps origin schedule.
 */
function expected(c: Case, slots: number[], writtenBefore: (s: number) => boolean): Map<number, Fate> {
  const up = Date.parse(c.upAt);
  const due = slots.filter((s) => s <= up);
  const newest = due[due.length - 1];
  const out = new Map<number, Fate>();
  for (const s of due) {
    const successor = slots[lowerBound(slots, s + 1)];
    const missed = successor <= up || s < up - GRACE_S * 1000;
    const origin = missed && !writtenBefore(s) ? "catch_up" : "schedule";
    if (c.maxLatenessSeconds !== undefined && s < up - c.maxLatenessSeconds * 1000) out.set(s, { fate: "too_late" });
    else if (!missed) out.set(s, { fate: "run", origin: "schedule" });
    else if (c.policy === "all") out.set(s, { fate: "run", origin });
    else if (c.policy === "skip") out.set(s, { fate: "missed" });
    else if (s === newest) out.set(s, { fate: "run", origin });
    else out.set(s, { fate: "coalesced", into: newest });
  }
  return out;
}

// ---- The table --------------------------------------------------------------------------------

type Mode = "first seen by the tick" | "written before, settled, then ticked" | "written before, ticked";
type Case = {
  name: string;
  timing: Timing;
  /** The last moment the product was up (slots after it were never claimed) and when it came back. */
  downFrom: string;
  upAt: string;
  policy: CatchUpPolicy;
  maxLatenessSeconds?: number;
  mode: Mode;
  /** The worked numbers stated beside the case, checked on top of the oracle. */
  runs?: number;
  tooLate?: number;
};

const every = (everySeconds: number): Timing => ({ everySeconds });
const CRON_LONDON: Timing = { cron: "30 1 * * *", timezone: "Europe/London" };
type Scenario = Omit<Case, "policy" | "mode" | "name"> & { label: string; policies?: PolicyCase[] };

type PolicyCase = { policy: CatchUpPolicy; maxLatenessSeconds?: number; runs?: number; tooLate?: number };
const ALL_POLICIES: PolicyCase[] = [{ policy: "skip" }, { policy: "latest" }, { policy: "all" }];
const SCENARIOS: Scenario[] = [
  // A 15-minute job, outage 10:02–10:52: 10:15, 10:30, 10:45 missed → 0 / 1 / 3 runs.
  {
    label: "every 15 min, outage 10:02–10:52",
    timing: every(900),
    downFrom: "2024-03-01T10:02:00Z",
    upAt: "2024-03-01T10:52:00Z",
    policies: [{ policy: "skip", runs: 0 }, { policy: "latest", runs: 1 }, { policy: "all", runs: 3 }],
  },
  // A 5-minute job after a 40-minute outage has 8 missed firings; all + 20 min max
  // lateness → the oldest 4 too late, the newest 4 run.
  {
    label: "every 5 min, outage 10:02–10:42",
    timing: every(300),
    downFrom: "2024-03-01T10:02:00Z",
    upAt: "2024-03-01T10:42:00Z",
    policies: [{ policy: "all", runs: 8 }, { policy: "all", maxLatenessSeconds: 1200, runs: 4, tooLate: 4 }, { policy: "skip", runs: 0 }, { policy: "latest", runs: 1 }],
  },
  // Every 1 s: outages shorter than, equal to and far longer than the grace.
  { label: "every 1 s, down 10 s", timing: every(1), downFrom: "2024-03-01T10:00:00.500Z", upAt: "2024-03-01T10:00:10.500Z" },
  { label: "every 1 s, down 30 s", timing: every(1), downFrom: "2024-03-01T10:00:00.500Z", upAt: "2024-03-01T10:00:30.500Z" },
  {
    label: "every 1 s, down 10 min",
    timing: every(1),
    downFrom: "2024-03-01T10:00:00.500Z",
    upAt: "2024-03-01T10:10:00.500Z",
    policies: [...ALL_POLICIES, { policy: "all", maxLatenessSeconds: 5 }, { policy: "latest", maxLatenessSeconds: 60 }],
  },
  // Every 4 s: the issue's 45 s outage (10 missed slots, the 11th on time), and shorter ones.
  { label: "every 4 s, down 45 s (the issue's outage)", timing: every(4), downFrom: "2024-03-01T10:00:01Z", upAt: "2024-03-01T10:00:45Z" },
  { label: "every 4 s, down 10 s", timing: every(4), downFrom: "2024-03-01T10:00:01Z", upAt: "2024-03-01T10:00:11Z" },
  { label: "every 4 s, down 3 s (inside one interval)", timing: every(4), downFrom: "2024-03-01T10:00:01Z", upAt: "2024-03-01T10:00:07Z" },
  { label: "every 4 s, down 10 min", timing: every(4), downFrom: "2024-03-01T10:00:01Z", upAt: "2024-03-01T10:10:01Z", policies: [...ALL_POLICIES, { policy: "skip", maxLatenessSeconds: 60 }] },
  // Every minute: a slot 29, 30 (equal to the grace: not missed) and 31 s late; a long outage.
  { label: "every 1 min, slot 29 s late", timing: every(60), downFrom: "2024-03-01T10:00:30Z", upAt: "2024-03-01T10:01:29Z" },
  { label: "every 1 min, slot 30 s late (equal to the grace)", timing: every(60), downFrom: "2024-03-01T10:00:30Z", upAt: "2024-03-01T10:01:30Z" },
  { label: "every 1 min, slot 31 s late", timing: every(60), downFrom: "2024-03-01T10:00:30Z", upAt: "2024-03-01T10:01:31Z" },
  { label: "every 1 min, down 2 h", timing: every(60), downFrom: "2024-03-01T10:00:30Z", upAt: "2024-03-01T12:00:45Z", policies: [...ALL_POLICIES, { policy: "all", maxLatenessSeconds: 600 }] },
  // Hourly: a few seconds late, within the grace, and a day's outage.
  { label: "hourly, slot 20 s late", timing: every(3600), downFrom: "2024-03-01T10:59:50Z", upAt: "2024-03-01T11:00:20Z" },
  { label: "hourly, slot 40 s late", timing: every(3600), downFrom: "2024-03-01T10:59:50Z", upAt: "2024-03-01T11:00:40Z" },
  { label: "hourly, down 1 day", timing: every(3600), downFrom: "2024-03-01T10:30:00Z", upAt: "2024-03-02T10:30:10Z", policies: [...ALL_POLICIES, { policy: "all", maxLatenessSeconds: 7200 }] },
  // 01:30 London daily across spring forward (Sun 31 Mar 2024: 01:30 does not exist; the slot is
  // 02:00 BST = 01:00 UTC, 23.5 h after Saturday's 01:30 GMT) and fall back (Sun 27 Oct 2024:
  // 01:30 happens twice; the slot is the first, 00:30 UTC, 24 h after Saturday's 01:30 BST).
  { label: "01:30 London, spring forward, up 10 s after Sunday's slot", timing: CRON_LONDON, downFrom: "2024-03-30T01:25:00Z", upAt: "2024-03-31T01:00:10Z" },
  { label: "01:30 London, spring forward, down 4 days", timing: CRON_LONDON, downFrom: "2024-03-28T12:00:00Z", upAt: "2024-04-01T12:00:00Z", policies: [...ALL_POLICIES, { policy: "all", maxLatenessSeconds: 2 * 86_400 }] },
  { label: "01:30 London, fall back, up 20 s after Sunday's slot", timing: CRON_LONDON, downFrom: "2024-10-26T00:25:00Z", upAt: "2024-10-27T00:30:20Z" },
  { label: "01:30 London, fall back, up 31 s after Sunday's slot", timing: CRON_LONDON, downFrom: "2024-10-26T00:25:00Z", upAt: "2024-10-27T00:30:31Z" },
  { label: "01:30 London, fall back, down 3 days", timing: CRON_LONDON, downFrom: "2024-10-25T12:00:00Z", upAt: "2024-10-28T12:00:00Z" },
];

const MODES: Mode[] = ["first seen by the tick", "written before, settled, then ticked", "written before, ticked"];
const CASES: Case[] = SCENARIOS.flatMap((sc) =>
  (sc.policies ?? ALL_POLICIES).flatMap((p) =>
    MODES.map((mode) => ({
      name: `${sc.label} · ${p.policy}${p.maxLatenessSeconds !== undefined ? ` + max lateness ${p.maxLatenessSeconds} s` : ""} · ${mode}`,
      timing: sc.timing,
      downFrom: sc.downFrom,
      upAt: sc.upAt,
      mode,
      ...p,
    })),
  ),
);

// ---- Running a case ---------------------------------------------------------------------------

type Row = { scheduled_for: Date; skipped_until: Date | null; skipped_count: number | null; state: string; origin: Fate["origin"]; skip_reason: Fate["fate"] | null; coalesced_into: Date | null };

async function tickUntilCaughtUp(horizonSeconds: number) {
  for (let i = 0; i < 20; i++) {
    const r = await tickOnce(t.db, { partitions: null, horizonSeconds, graceSeconds: GRACE_S });
    if (r.schedules === 0) return;
  }
  throw new Error("the tick did not catch up in 20 passes");
}

describe("catch-up: one table of worked cases (real tick and lateness pass, database clock moved)", () => {
  it("has the cases the issue names", () => {
    expect(CASES.length).toBeGreaterThan(100);
  });

  it.each(CASES)("$name", async (c) => {
    const down = Date.parse(c.downFrom);
    const up = Date.parse(c.upAt);
    // Enough slots to hold the successor of every due one and the first after the outage.
    const written = Math.max(up + HORIZON_AFTER_S * 1000, down + HORIZON_BEFORE_S * 1000);
    const slots = slotsOf(c.timing, down + 1, written + ("everySeconds" in c.timing ? 2 * c.timing.everySeconds * 1000 : 3 * 86_400_000));
    await setClock(t.pool, new Date(down));
    const s = await makeSchedule(t.db, {
      ...("everySeconds" in c.timing ? { everySeconds: c.timing.everySeconds } : { cron: c.timing.cron, timezone: c.timing.timezone }),
      catchUp: c.policy,
      maxLatenessSeconds: c.maxLatenessSeconds ?? null,
      nextSlotAt: new Date(slots[0]),
    });
    const writtenBefore = (slot: number) => c.mode !== "first seen by the tick" && slot <= down + HORIZON_BEFORE_S * 1000;
    if (c.mode !== "first seen by the tick") await tickUntilCaughtUp(HORIZON_BEFORE_S);

    // The product comes back: a worker settles its partitions before its first claim (the lateness
    // pass over every due run), and its tick loop ticks.
    await setClock(t.pool, new Date(up));
    if (c.mode === "written before, settled, then ticked") await runLatenessPass(t.db, { partitions: null, graceSeconds: GRACE_S, windowPerPartition: null });
    await tickUntilCaughtUp(HORIZON_AFTER_S);

    // What the product wrote, slot by slot (a skipped range stands for every slot in it).
    const { rows } = await t.pool.query<Row>(
      `SELECT scheduled_for, skipped_until, skipped_count, state, origin, skip_reason, coalesced_into FROM runs WHERE schedule_id = $1 ORDER BY scheduled_for`,
      [s.id],
    );
    const seen = new Map<number, Fate>();
    for (const r of rows) {
      const first = r.scheduled_for.getTime();
      const last = (r.skipped_until ?? r.scheduled_for).getTime();
      const covered = slots.slice(lowerBound(slots, first), lowerBound(slots, last + 1));
      expect(covered[0], `row at ${r.scheduled_for.toISOString()} is a slot`).toBe(first);
      if (r.state === "skipped") expect(r.skipped_count, `row at ${r.scheduled_for.toISOString()} counts its slots`).toBe(covered.length);
      for (const x of covered) {
        expect(seen.has(x), `slot ${new Date(x).toISOString()} written once`).toBe(false);
        seen.set(x, r.state === "pending" ? { fate: "run", origin: r.origin } : { fate: r.skip_reason!, ...(r.coalesced_into ? { into: r.coalesced_into.getTime() } : {}) });
      }
    }

    const want = expected(c, slots, writtenBefore);
    const show = (m: Map<number, Fate>) => [...m].filter(([x]) => x <= up).map(([x, f]) => `${new Date(x).toISOString()} ${f.fate}${f.origin ? `/${f.origin}` : ""}${f.into ? `→${new Date(f.into).toISOString()}` : ""}`);
    expect(show(seen)).toEqual(show(want));
    // The slots after the outage are there, as ordinary runs.
    const next = slots.find((x) => x > up)!;
    if (next <= up + HORIZON_AFTER_S * 1000) expect(seen.get(next)).toEqual({ fate: "run", origin: "schedule" });
    if (c.runs !== undefined) expect([...want.values()].filter((f) => f.fate === "run").length).toBe(c.runs);
    if (c.tooLate !== undefined) expect([...want.values()].filter((f) => f.fate === "too_late").length).toBe(c.tooLate);
  });
});
