// A brute-force oracle for cron slots, deliberately naive and independent of lib/schedules
// (cron.ts, zoned-time.ts, timing.ts): walk real time minute by minute, read each minute's local
// wall time from Intl, and decide whether it fires. croner is used only to ask "does this wall
// time match?". Tests check Slotkeeper's slots against it.
import { Cron } from "croner";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** Walk from this long before the range, so "seen before" is right when it starts inside a repeated hour. */
const LEAD_IN = 6 * HOUR;

const formatters = new Map<string, Intl.DateTimeFormat>();
const wallMemo = new Map<string, Map<number, number>>();

/** Local wall time of instant t in tz, as milliseconds of a UTC date with the same fields. */
function wallTime(tz: string, t: number): number {
  let memo = wallMemo.get(tz);
  if (!memo || memo.size > 1_000_000) wallMemo.set(tz, (memo = new Map()));
  const hit = memo.get(t);
  if (hit !== undefined) return hit;
  let fmt = formatters.get(tz);
  if (!fmt) {
    fmt = new Intl.DateTimeFormat("en-GB", {
      timeZone: tz,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
    });
    formatters.set(tz, fmt);
  }
  // "dd/mm/yyyy, hh:mm" (format() is several times faster than formatToParts())
  const m = /^(\d\d)\/(\d\d)\/(\d{4}), (\d\d):(\d\d)$/.exec(fmt.format(t));
  if (!m) throw new Error(`unexpected Intl output for ${tz}`);
  const wall = Date.UTC(+m[3], +m[2] - 1, +m[1], +m[4], +m[5]);
  memo.set(t, wall);
  return wall;
}

const matchers = new Map<string, { cron: Cron; memo: Map<number, boolean> }>();
function matches(expr: string, wall: number): boolean {
  let m = matchers.get(expr);
  if (!m) {
    m = { cron: new Cron(expr, { utcOffset: 0, legacyMode: true }), memo: new Map() };
    matchers.set(expr, m);
  }
  let hit = m.memo.get(wall);
  if (hit === undefined) {
    hit = m.cron.match(new Date(wall));
    m.memo.set(wall, hit);
  }
  return hit;
}

/**
 * The firing instants of `expr` in `tz` from `fromMs` to `toMs` (both inclusive), in order, by the
 * DST rule cron.ts documents: an expression whose hour field has `*` or `/` fires at every real
 * instant whose wall time matches; any other fires once per matching wall time, at the first
 * occurrence, or at the first instant after a spring-forward gap that swallowed it. Minute
 * resolution: a six-field expression must fire at second 0.
 */
function* firings(expr: string, tz: string, fromMs: number, toMs: number): Generator<number> {
  const fields = expr.trim().split(/\s+/);
  if (fields.length === 6 && fields[0] !== "0") throw new Error(`cron oracle: minute resolution only, got seconds field "${fields[0]}"`);
  const hourField = fields[fields.length === 6 ? 2 : 1];
  const wallClock = hourField.includes("*") || hourField.includes("/");
  const seen = new Set<number>();
  let prevWall: number | undefined;
  for (let t = Math.floor((fromMs - LEAD_IN) / MINUTE) * MINUTE; t <= toMs; t += MINUTE) {
    const wall = wallTime(tz, t);
    let fire: boolean;
    if (wallClock) {
      fire = matches(expr, wall);
    } else {
      fire = !seen.has(wall) && matches(expr, wall);
      // Clock jumped forward: skipped wall minutes that match fire now.
      if (prevWall !== undefined) for (let s = prevWall + MINUTE; s < wall && !fire; s += MINUTE) fire = matches(expr, s);
    }
    seen.add(wall);
    prevWall = wall;
    if (fire && t >= fromMs) yield t;
  }
}

/** Every firing instant from `fromMs` to `toMs`, both inclusive. */
export function bruteForceCronSlots(expr: string, tz: string, fromMs: number, toMs: number): number[] {
  return [...firings(expr, tz, fromMs, toMs)];
}

/** The first firing strictly after `after` within `horizonMs`, or undefined. */
export function nextCronSlotByBruteForce(expr: string, tz: string, after: number, horizonMs: number): number | undefined {
  for (const t of firings(expr, tz, after, after + horizonMs)) if (t > after) return t;
  return undefined;
}
