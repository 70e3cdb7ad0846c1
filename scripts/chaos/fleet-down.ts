// When no worker could claim at all. The stated bound holds "as long as a live worker has a free
// slot" (docs/schedules.md#worst-case-lateness); when the faults have every worker at once dead,
// frozen, cut off or still starting (a kill, a replacement booting, a freeze and a silence within
// a few seconds of each other), nothing can start until one is back, and a slot's wait is judged
// from then. The intervals come from this process's own record of the faults and from each
// worker's own log (when it started), never from the database.
import fs from "node:fs";
import path from "node:path";
import type { FaultEvent } from "./faults";

export type Interval = [number, number];

/** When each worker of the run could claim: from its `worker:start` line until a fault took it. */
export function workerUpIntervals(starts: Map<string, number>, faults: FaultEvent[], end: number): Map<string, Interval[]> {
  const out = new Map<string, Interval[]>();
  for (const [worker, from] of starts) {
    const own = faults.filter((f) => f.workerId === worker).sort((a, b) => a.at - b.at);
    const up: Interval[] = [];
    let since: number | null = from;
    for (const f of own) {
      if (since !== null && f.at > since) up.push([since, f.at]);
      since = null;
      // Frozen or cut off for a while, then back; killed or stopped for good.
      if ((f.kind === "sigstop" || f.kind === "silent") && f.until !== undefined) since = Math.max(f.until, from);
    }
    if (since !== null && end > since) up.push([since, end]);
    out.set(worker, up);
  }
  return out;
}

/** The stretches of [from, to] in which no worker was up. */
export function fleetDownIntervals(up: Map<string, Interval[]>, from: number, to: number): Interval[] {
  const all = [...up.values()].flat().filter(([a, z]) => z > from && a < to).sort((x, y) => x[0] - y[0]);
  const down: Interval[] = [];
  let cursor = from;
  for (const [a, z] of all) {
    if (a > cursor) down.push([cursor, a]);
    cursor = Math.max(cursor, z);
  }
  if (cursor < to) down.push([cursor, to]);
  return down;
}

/**
 * When a wait that began at `due` and ended at `start` is judged from: the end of the last stretch
 * with no worker up that overlaps it, else `due`.
 */
export function waitJudgedFrom(down: Interval[], due: number, start: number): number {
  let from = due;
  for (const [a, z] of down) if (a < start && z > from) from = Math.min(Math.max(from, z), start);
  return from;
}

/** Each worker's first `worker:start` line (this process's clock; the skewed worker's less its skew). */
export function readWorkerStarts(logDir: string, skewMs: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const f of fs.readdirSync(logDir).filter((n) => /^chaos-(normal|skewed|churn)-\d+\.log$/.test(n))) {
    const m = fs.readFileSync(path.join(logDir, f), "utf8").match(/"time":"([^"]+)"[^\n]*"event":"worker:start"/);
    if (m) out.set(f.replace(/\.log$/, ""), Date.parse(m[1]) - (f.startsWith("chaos-skewed-") ? skewMs : 0));
  }
  return out;
}
