/**
 * Deterministic per-slot jitter. Thousands of schedules on "0 * * * *" would otherwise all be
 * due in the same millisecond; each (schedule, slot) pair gets its own offset in
 * [0, jitterSeconds) instead. Deterministic so that every worker, and every retry of the tick
 * that claims the slot, computes the same due time without storing it.
 *
 * Hash: 32-bit FNV-1a over "<id>|<slot ISO>", then murmur3's fmix32 finalizer, because plain
 * FNV-1a spreads inputs that differ only in their last characters poorly over the high bits
 * that the scaling below relies on.
 */

export function jitterOffsetMs(scheduleId: string | number | bigint, slot: Date, jitterSeconds: number): number {
  if (!Number.isFinite(jitterSeconds) || jitterSeconds < 0) throw new RangeError(`jitterSeconds must be >= 0, got ${jitterSeconds}`);
  const windowMs = Math.floor(jitterSeconds * 1000);
  if (windowMs <= 0) return 0;
  const key = `${String(scheduleId)}|${slot.toISOString()}`;
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return Math.floor(((h >>> 0) / 4294967296) * windowMs);
}
