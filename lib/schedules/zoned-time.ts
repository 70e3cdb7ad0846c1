/**
 * UTC-offset lookups for IANA time zones, built on Intl.DateTimeFormat.
 *
 * Intl is slow, and the scheduler asks for offsets hundreds of thousands of
 * times per tick, so each zone keeps a cache keyed by UTC day: the offset at the start of the
 * day, and, when the offset at the start of the next day differs, the exact transition instant
 * (binary search to the second). Assumption: a zone changes its offset at most once per UTC
 * day, and two changes never cancel out within one day (then neither would be seen). Current
 * tzdata rules satisfy this; scheduling is not expected to reach back into oddities of the past.
 *
 * Offsets are in milliseconds to add to a UTC instant to get the local wall time encoded as if
 * it were UTC ("naive" wall time).
 */

const DAY_MS = 86_400_000;
const MAX_CACHED_DAYS = 100_000;

export type Transition = { at: number; before: number; after: number };

type DayInfo = { before: number; at: number; after: number }; // at = NaN when no change

export type Zone = {
  /** Canonical IANA name as Intl resolves it ("UTC" for Etc/UTC, GMT, Zulu, ...). */
  name: string;
  /** Set when the zone never changes offset (UTC, Etc/GMT±N): callers can skip the cache. */
  fixedOffsetMs: number | null;
  fmt: Intl.DateTimeFormat;
  startOffsets: Map<number, number>;
  days: Map<number, DayInfo>;
};

const zones = new Map<string, Zone>();

export function isValidTimeZone(tz: string): boolean {
  if (typeof tz !== "string" || tz.trim() === "" || tz !== tz.trim()) return false;
  try {
    getZone(tz);
    return true;
  } catch {
    return false;
  }
}

/** Throws RangeError for names Intl does not know. */
export function getZone(tz: string): Zone {
  const hit = zones.get(tz);
  if (hit) return hit;
  const fmt = new Intl.DateTimeFormat("en-US", {
    timeZone: tz,
    hourCycle: "h23",
    year: "numeric",
    month: "numeric",
    day: "numeric",
    hour: "numeric",
    minute: "numeric",
    second: "numeric",
    era: "short",
  });
  const name = fmt.resolvedOptions().timeZone;
  let zone = zones.get(name);
  if (!zone) {
    zone = { name, fixedOffsetMs: fixedOffsetOf(name), fmt, startOffsets: new Map(), days: new Map() };
    zones.set(name, zone);
  }
  if (zones.size > 2_000) zones.clear(); // there are ~600 zone names; bound junk input
  zones.set(tz, zone);
  return zone;
}

function fixedOffsetOf(canonical: string): number | null {
  if (canonical === "UTC") return 0;
  // POSIX-style sign: Etc/GMT+5 is five hours *behind* UTC.
  const m = /^Etc\/GMT([+-])(\d{1,2})$/.exec(canonical);
  if (!m) return null;
  return (m[1] === "+" ? -1 : 1) * Number(m[2]) * 3_600_000;
}

/** Offset straight from Intl, for an instant truncated to the second. */
function intlOffset(zone: Zone, t: number): number {
  const sec = Math.floor(t / 1000) * 1000;
  const f: Record<string, string> = {};
  for (const p of zone.fmt.formatToParts(new Date(sec))) f[p.type] = p.value;
  let year = Number(f.year);
  if (f.era === "BC" || f.era === "B") year = 1 - year;
  const d = new Date(0);
  d.setUTCFullYear(year, Number(f.month) - 1, Number(f.day));
  d.setUTCHours(Number(f.hour), Number(f.minute), Number(f.second), 0);
  return d.getTime() - sec;
}

function startOffset(zone: Zone, day: number): number {
  let off = zone.startOffsets.get(day);
  if (off === undefined) {
    off = intlOffset(zone, day * DAY_MS);
    zone.startOffsets.set(day, off);
  }
  return off;
}

function dayInfo(zone: Zone, day: number): DayInfo {
  let info = zone.days.get(day);
  if (info) return info;
  if (zone.days.size > MAX_CACHED_DAYS) {
    zone.days.clear();
    zone.startOffsets.clear();
  }
  const before = startOffset(zone, day);
  const after = startOffset(zone, day + 1);
  let at = Number.NaN;
  if (before !== after) {
    let lo = day * DAY_MS; // offset === before
    let hi = lo + DAY_MS; // offset === after
    while (hi - lo > 1000) {
      const mid = Math.floor((lo + hi) / 2000) * 1000;
      if (intlOffset(zone, mid) === before) lo = mid;
      else hi = mid;
    }
    at = hi;
  }
  info = { before, at, after };
  zone.days.set(day, info);
  return info;
}

export function offsetAt(zone: Zone, t: number): number {
  if (zone.fixedOffsetMs !== null) return zone.fixedOffsetMs;
  const info = dayInfo(zone, Math.floor(t / DAY_MS));
  return t >= info.at ? info.after : info.before; // NaN compares false
}

/** First transition with fromExclusive < at <= toInclusive. Cost is linear in days spanned. */
export function firstTransitionIn(zone: Zone, fromExclusive: number, toInclusive: number): Transition | null {
  if (zone.fixedOffsetMs !== null) return null;
  const last = Math.floor(toInclusive / DAY_MS);
  for (let day = Math.floor(fromExclusive / DAY_MS); day <= last; day++) {
    const info = dayInfo(zone, day);
    if (info.at > fromExclusive && info.at <= toInclusive) return { at: info.at, before: info.before, after: info.after };
  }
  return null;
}

/** Last transition with fromExclusive < at <= toInclusive. */
export function lastTransitionIn(zone: Zone, fromExclusive: number, toInclusive: number): Transition | null {
  if (zone.fixedOffsetMs !== null) return null;
  const first = Math.floor(fromExclusive / DAY_MS);
  for (let day = Math.floor(toInclusive / DAY_MS); day >= first; day--) {
    const info = dayInfo(zone, day);
    if (info.at > fromExclusive && info.at <= toInclusive) return { at: info.at, before: info.before, after: info.after };
  }
  return null;
}
