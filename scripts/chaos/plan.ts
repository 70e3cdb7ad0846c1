// The schedules a chaos run creates. All but the timing schedules use catch-up "all" and no max
// lateness, so the oracle's rule for them is simple: every slot from creation to the cut exists
// exactly once and ends done (or dead, for the fail schedule). The timing schedules start with
// each catch-up policy (one with max lateness too) and are edited during the run
// (timing-edits.ts); their own oracle is timing-oracle.ts. Cadences are seconds; one is 30 s, slower than the churn worker's
// 10-second restart loop; one is a seconds-field cron expression read by croner in the oracle.
// Two schedules call the witness (scripts/chaos/witness.ts) through the `http` handler, and two
// run 3.25 leases long, so they finish only if their leases are renewed.
import type { ChaosOptions } from "./options";
import { hogSchedule } from "./pool";
import { TIMING_MAX_LATENESS_SECONDS } from "./timing-edits";

/** One schedule body for POST /api/schedules. */
export type ScheduleBody = { name: string; handler: string; payload: Record<string, unknown>; catchUp: "skip" | "latest" | "all"; maxLatenessSeconds?: number | null; leaseSeconds: number; retry: Record<string, number> } & (
  | { everySeconds: number }
  | { cron: string; timezone: string }
);

const CADENCES = [2, 3, 5, 30, 7, 4, 11, 6, 13, 9];
/** Work before the ledger write: some runs are mid-handler when their worker is killed or frozen. */
const PAYLOADS: Record<string, unknown>[] = [
  {},
  { delayMs: 1500, interruptible: false },
  { delayMs: 800 },
  {},
  { delayMs: 1200, interruptible: false },
];

/** How long a heartbeat schedule's work takes, in leases: it survives only by renewal. */
export const HEARTBEAT_LEASES = 3.25;

/**
 * The sql-ledger schedules, the heartbeat schedules (sql-ledger, 3.25 leases of work; one ignores
 * its abort signal, so a worker frozen past its lease wakes up and tries to write), the witness's
 * http schedules, the fail schedule (dead runs to re-queue), and later creations.
 */
export function planSchedules(o: ChaosOptions, runTag: string, witnessUrl: string) {
  const common = { catchUp: "all" as const, leaseSeconds: o.leaseSeconds, retry: { maxAttempts: 50, baseSeconds: 1, capSeconds: 4 } };
  const ledger: ScheduleBody[] = [];
  for (let i = 0; i < o.schedules; i++) {
    const name = `chaos-${runTag}-${i}`;
    const payload = PAYLOADS[i % PAYLOADS.length];
    // Every fifth schedule is cron with a seconds field, so the oracle also exercises croner.
    if (i % 5 === 4) ledger.push({ name, handler: "sql-ledger", payload, cron: "*/4 * * * * *", timezone: "Europe/London", ...common });
    else ledger.push({ name, handler: "sql-ledger", payload, everySeconds: CADENCES[i % CADENCES.length], ...common });
  }
  const workMs = Math.round(HEARTBEAT_LEASES * o.leaseSeconds * 1000);
  const heartbeat: ScheduleBody[] = [
    { name: `chaos-${runTag}-heartbeat-0`, handler: "sql-ledger", payload: { delayMs: workMs }, everySeconds: 20, ...common },
    { name: `chaos-${runTag}-heartbeat-1`, handler: "sql-ledger", payload: { delayMs: workMs, interruptible: false }, everySeconds: 15, ...common },
  ];
  const witnessed: ScheduleBody[] = [
    { name: `chaos-${runTag}-http-0`, handler: "http", payload: { url: witnessUrl, method: "POST", body: {} }, everySeconds: 2, ...common },
    { name: `chaos-${runTag}-http-1`, handler: "http", payload: { url: witnessUrl, method: "POST", body: {} }, cron: "*/3 * * * * *", timezone: "UTC", ...common },
  ];
  const fail: ScheduleBody = { name: `chaos-${runTag}-fail`, handler: "fail", payload: { nonRetryable: true }, everySeconds: 10, ...common };
  const later = (n: number): ScheduleBody => ({ name: `chaos-${runTag}-late-${n}`, handler: "sql-ledger", payload: { delayMs: 300 }, everySeconds: 3 + n, ...common });
  // Pool exhaustion (scripts/chaos/pool.ts): a handler that holds more connections than its pool has.
  const hog = [hogSchedule(runTag, common)];
  const timing: ScheduleBody[] = [
    { name: `chaos-${runTag}-timing-skip`, handler: "sql-ledger", payload: {}, everySeconds: 2, ...common, catchUp: "skip" },
    { name: `chaos-${runTag}-timing-latest`, handler: "sql-ledger", payload: {}, cron: "*/3 * * * * *", timezone: "UTC", ...common, catchUp: "latest" },
    { name: `chaos-${runTag}-timing-all`, handler: "sql-ledger", payload: {}, everySeconds: 3, ...common },
    { name: `chaos-${runTag}-timing-late`, handler: "sql-ledger", payload: {}, everySeconds: 2, ...common, maxLatenessSeconds: TIMING_MAX_LATENESS_SECONDS },
  ];
  return { ledger, heartbeat, witnessed, fail, later, hog, timing };
}
