/**
 * Which partitions a worker must settle before it claims there: those it did not claim in on its
 * previous pass and has not claimed in for longer than `afterAbsenceMs` (never, after a restart;
 * newly held; orphaned; back after a gap). Settling is the lateness pass over every due run of the
 * partition, so that slots missed while nobody claimed there meet their catch-up policy before a
 * claim can start them (lib/schedules/missed.ts). A shorter absence (a partition flickering in and
 * out of orphaned, a renewal that came late) is no gap in which runs could pile up unclaimed; the
 * tick loop's periodic pass covers it.
 */
export function createPartitionSettler(settle: (partitions: number[]) => Promise<unknown>, afterAbsenceMs: number) {
  // When each partition was last among those claimed in (performance.now()), once settled.
  const seenAt = new Map<number, number>();
  let previous: readonly number[] = [];
  return {
    /** Settle what needs it among `parts` (the partitions about to be claimed in); null: every partition, never settled. */
    async before(parts: number[] | null): Promise<void> {
      if (parts === null) return;
      const now = performance.now();
      const fresh = parts.filter((p) => {
        if (previous.includes(p)) return false;
        const seen = seenAt.get(p);
        return seen === undefined || now - seen > afterAbsenceMs;
      });
      if (fresh.length > 0) await settle(fresh);
      for (const p of parts) seenAt.set(p, now);
      previous = parts;
    },
  };
}
