/**
 * Next slot of a cron expression in an IANA time zone.
 *
 * croner parses expressions and matches fields (5 fields, or 6 with leading seconds; @yearly,
 * @annually, @monthly, @weekly, @daily, @midnight, @hourly; day-of-month and day-of-week are
 * ORed when both are restricted, as in Vixie cron). croner also has its own DST handling, but
 * its rule for which jobs are "fixed-time" looks at the seconds and minutes fields too, so we
 * only let it enumerate local wall times in UTC mode and apply the DST rule ourselves.
 *
 * DST rule (Vixie cron's):
 * - An expression whose hour field contains `*` or `/` (`0 * * * *`, `*\/15 * * * *`,
 *   `0 *\/2 * * *`, `@hourly`) is a WALL-CLOCK schedule. It fires at every real instant whose
 *   local wall time matches. Wall times inside a spring-forward gap do not exist and do not
 *   fire; wall times repeated at fall-back fire at both occurrences. So an hourly job runs once
 *   in every real hour: no doubled hour, no two-hour hole.
 * - Any other expression (`30 2 * * *`, `0 9-17 * * *`, `@daily`) is a NAMED-TIME schedule.
 *   Each matching wall time fires exactly once: at its instant if it occurs once; at its first
 *   occurrence if it occurs twice (fall-back); at the first instant after the gap (the
 *   transition instant, e.g. 03:00 EDT for 02:30 in New York) if it does not exist. Several
 *   matching wall times in one gap (`*\/15 2 * * *`) all map to that instant and fire once.
 *
 * Slots therefore form a fixed set of instants per (expression, zone); nextCronSlot returns
 * the smallest member strictly after its argument and never looks at the clock.
 *
 * How: local wall time is handled as a "naive" timestamp (wall time encoded as if UTC). The
 * real timeline is cut into segments of constant UTC offset at the zone's transitions. Inside
 * a segment wall time is just instant + offset, so croner's next naive match, shifted back by
 * the offset, is the answer unless a transition comes first; then the gap (named-time only)
 * and the next segment are examined. A fixed-offset zone (UTC, Etc/GMT±N) has one segment.
 */
import { Cron } from "croner";
import cronstrue from "cronstrue";
import { firstTransitionIn, getZone, isValidTimeZone, lastTransitionIn, offsetAt, type Zone } from "./zoned-time";

export { isValidTimeZone };

export type CronSpec = { cron: string; timezone: string };

export class CronError extends Error {
  readonly field: "cron" | "timezone";
  constructor(field: "cron" | "timezone", message: string) {
    super(message);
    this.name = "CronError";
    this.field = field;
  }
}

export type ParsedCron = {
  readonly expr: string;
  /** Canonical zone name, e.g. "UTC" for "Etc/UTC". */
  readonly timezone: string;
  readonly wallClock: boolean;
  readonly naive: Cron;
  readonly zone: Zone;
};

const CACHE_LIMIT = 50_000;
const naiveCache = new Map<string, Cron>();
const parsedCache = new Map<string, ParsedCron>();

function remember<V>(map: Map<string, V>, key: string, value: V): V {
  if (map.size >= CACHE_LIMIT) map.delete(map.keys().next().value as string);
  map.set(key, value);
  return value;
}

/** croner in UTC mode: its matches are naive wall times, whatever zone they are meant for. */
function naiveCron(expr: string): Cron {
  const hit = naiveCache.get(expr);
  if (hit) return hit;
  if (expr === "") throw new CronError("cron", "Cron expression is empty");
  // croner would take an ISO date-time as a one-shot job; slots come from recurring patterns only.
  if (expr.includes(":")) throw new CronError("cron", `Invalid cron expression "${expr}": expected 5 or 6 fields, not a date`);
  let cron: Cron;
  try {
    // domAndDow:false is Vixie's OR of day-of-month and day-of-week (croner's legacy mode).
    cron = new Cron(expr, { utcOffset: 0, mode: "5-or-6-parts", domAndDow: false });
  } catch (err) {
    const why = (err instanceof Error ? err.message : String(err)).replace(/^CronPattern:\s*/, "");
    throw new CronError("cron", `Invalid cron expression "${expr}": ${why}`);
  }
  return remember(naiveCache, expr, cron);
}

export function parseCron(expr: string, timezone: string): ParsedCron {
  const key = `${timezone}\n${expr}`;
  const hit = parsedCache.get(key);
  if (hit) return hit;
  const trimmed = typeof expr === "string" ? expr.trim() : "";
  const naive = naiveCron(trimmed);
  if (!isValidTimeZone(timezone)) {
    throw new CronError("timezone", `Unknown time zone "${timezone}": use an IANA name such as "Europe/London" or "UTC"`);
  }
  const zone = getZone(timezone);
  const parsed: ParsedCron = { expr: trimmed, timezone: zone.name, wallClock: isWallClockSchedule(trimmed), naive, zone };
  return remember(parsedCache, key, parsed);
}

export function isWallClockSchedule(expr: string): boolean {
  const e = expr.trim();
  if (e.startsWith("@")) return e.toLowerCase() === "@hourly";
  const fields = e.split(/\s+/);
  const hour = fields.length === 6 ? fields[2] : fields[1];
  return hour !== undefined && /[*/?]/.test(hour); // croner reads `?` as `*`
}

export function describeCron(expr: string): string {
  const trimmed = expr.trim();
  naiveCron(trimmed); // same acceptance rules as scheduling
  try {
    return cronstrue.toString(trimmed, { throwExceptionOnParseError: true });
  } catch (err) {
    throw new CronError("cron", `Cannot describe cron expression "${trimmed}": ${String(err)}`);
  }
}

export function nextCronSlot(spec: CronSpec, after: Date): Date | null {
  const a = after.getTime();
  if (Number.isNaN(a)) throw new RangeError("nextCronSlot: invalid date");
  const next = nextSlotMs(parseCron(spec.cron, spec.timezone), a);
  return next === null ? null : new Date(next);
}

/** Smallest naive wall time strictly after `wallMs` (croner works in whole seconds). */
function nextNaive(cron: Cron, wallMs: number): number | null {
  const d = cron.nextRun(new Date(wallMs));
  return d ? d.getTime() : null;
}

/** A day is far more than any real offset change; used only to look back for a fall-back. */
const LOOKBACK_MS = 86_400_000;
const MAX_SEGMENTS = 10_000;

export function nextSlotMs(p: ParsedCron, a: number): number | null {
  const { zone, naive } = p;
  if (zone.fixedOffsetMs !== null) {
    const w = nextNaive(naive, a + zone.fixedOffsetMs);
    return w === null ? null : w - zone.fixedOffsetMs;
  }
  let segStart = a; // instants considered are > a, and the offset is constant from segStart on
  let offset = offsetAt(zone, a);
  let wallFloor = a + offset; // candidate wall times must be > wallFloor
  if (!p.wallClock) {
    // Right after a fall-back, the repeated wall times already fired at their first occurrence.
    const t = lastTransitionIn(zone, a - LOOKBACK_MS, a);
    if (t && t.before > t.after) wallFloor = Math.max(wallFloor, t.at + t.before - 1000);
  }
  for (let i = 0; i < MAX_SEGMENTS; i++) {
    const wall = nextNaive(naive, wallFloor);
    if (wall === null) return null;
    const instant = wall - offset;
    const t = firstTransitionIn(zone, segStart, instant);
    if (!t) return instant;
    // No slot in [segStart, t.at): continue in the segment that starts at the transition.
    if (t.after > t.before) {
      // Spring forward: wall times [at+before, at+after) are skipped.
      if (!p.wallClock) {
        const skipped = nextNaive(naive, t.at + t.before - 1000);
        if (skipped !== null && skipped < t.at + t.after) return t.at;
      }
      wallFloor = t.at + t.after - 1000;
    } else {
      // Fall back: wall times [at+after, at+before) come again; only wall-clock jobs repeat them.
      wallFloor = (p.wallClock ? t.at + t.after : t.at + t.before) - 1000;
    }
    segStart = t.at;
    offset = t.after;
  }
  return null;
}
