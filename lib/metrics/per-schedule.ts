/**
 * Which schedules `/api/metrics` reports one by one (SLOTKEEPER_METRICS_PER_SCHEDULE). By default
 * none: the scrape aggregates by status and handler, so its size does not grow with the fleet. An
 * operator opts in for a bounded set:
 *
 * - `worst:N` — the N worst schedules as the last alert pass judged them: failing, then late, then
 *   backlogged, then healthy, then paused, each by how long past (or how near) the first of its late
 *   and backlog thresholds (1 ≤ N ≤ 1000); their series are read at the scrape. `worst:20` reports at
 *   most 20 schedules, read through an index that stops after 20.
 * - `tag:NAME` — every schedule carrying the tag (`tag:critical`). The operator bounds it by how
 *   many schedules they tag.
 */
export type PerScheduleMetrics = null | { kind: "worst"; count: number } | { kind: "tag"; tag: string };

/** The largest N of `worst:N`: a scrape stays well under a megabyte. */
export const MAX_WORST_SCHEDULES = 1000;

/** Parse the setting; `fail` builds the error to throw, naming what is wrong. */
export function parsePerScheduleMetrics(value: string | undefined, fail: (message: string) => Error = (m) => new Error(m)): PerScheduleMetrics {
  if (value === undefined || value.trim() === "") return null;
  const v = value.trim();
  const worst = /^worst:(\d+)$/.exec(v);
  if (worst) {
    const count = Number(worst[1]);
    if (count < 1 || count > MAX_WORST_SCHEDULES) throw fail(`worst:N needs 1 ≤ N ≤ ${MAX_WORST_SCHEDULES}, got ${count}`);
    return { kind: "worst", count };
  }
  const tag = /^tag:(.+)$/.exec(v);
  if (tag) return { kind: "tag", tag: tag[1].trim() };
  throw fail(`expected worst:N (e.g. worst:20) or tag:NAME (e.g. tag:critical), got ${JSON.stringify(v)}`);
}
