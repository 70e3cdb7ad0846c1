/**
 * Which partitions a worker must settle before it claims there: those it did not claim in on its
 * previous pass and has not claimed in for longer than `afterAbsenceMs` (never, after a restart;
 * newly held; orphaned; back after a gap). Settling is the lateness pass over every due run of the
 * partition, so that slots missed while nobody claimed there meet their catch-up policy before a
 * claim can start them (lib/schedules/missed.ts). A shorter absence (a partition flickering in and
 * out of orphaned, a renewal that came late) is no gap in which runs could pile up unclaimed; the
 * tick loop's periodic pass covers it.
 *
 * A partition counts as claimed in only when a claim pass there succeeded (`claimed`): while the
 * database is away every pass fails, so after an outage longer than `afterAbsenceMs` each
 * partition is settled again before the first claim, and a slot that waited past its max lateness
 * or its successor meanwhile is skipped by its policy instead of started late.
 */
export function createPartitionSettler(settle: (partitions: number[]) => Promise<unknown>, afterAbsenceMs: number) {
  // When each partition was last among those claimed in (performance.now()), once settled.
  const seenAt = new Map<number, number>();
  let previous: readonly number[] = [];
  // Whether the last pass's claim succeeded: a failed pass held nothing.
  let claimedLast = false;
  return {
    /** Settle what needs it among `parts` (the partitions about to be claimed in); null: every partition, never settled. */
    async before(parts: number[] | null): Promise<void> {
      if (parts === null) return;
      const now = performance.now();
      const held = claimedLast ? previous : [];
      claimedLast = false;
      const fresh = parts.filter((p) => {
        if (held.includes(p)) return false;
        const seen = seenAt.get(p);
        return seen === undefined || now - seen > afterAbsenceMs;
      });
      if (fresh.length > 0) await settle(fresh);
    },
    /** A claim pass over `parts` succeeded: they were claimed in now. */
    claimed(parts: number[] | null): void {
      if (parts === null) return;
      const now = performance.now();
      for (const p of parts) seenAt.set(p, now);
      previous = parts;
      claimedLast = true;
    },
  };
}
