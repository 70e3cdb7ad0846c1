// The schedules a chaos run creates. All use catch-up "all" and no max lateness, so the oracle's
// rule is simple: every slot from creation to the cut exists exactly once and ends done (or dead,
// for the fail schedule). Cadences are seconds; one is 30 s, slower than the churn worker's
// 10-second restart loop; one is a seconds-field cron expression read by croner in the oracle.
import type { ChaosOptions } from "./options";

/** One schedule body for POST /api/schedules. */
export type ScheduleBody = { name: string; handler: string; payload: Record<string, unknown>; catchUp: "all"; leaseSeconds: number; retry: Record<string, number> } & (
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

/** The sql-ledger schedules, the fail schedule (dead runs to re-queue), and later creations. */
export function planSchedules(o: ChaosOptions, runTag: string) {
  const common = { catchUp: "all" as const, leaseSeconds: o.leaseSeconds, retry: { maxAttempts: 50, baseSeconds: 1, capSeconds: 4 } };
  const ledger: ScheduleBody[] = [];
  for (let i = 0; i < o.schedules; i++) {
    const name = `chaos-${runTag}-${i}`;
    const payload = PAYLOADS[i % PAYLOADS.length];
    // Every fifth schedule is cron with a seconds field, so the oracle also exercises croner.
    if (i % 5 === 4) ledger.push({ name, handler: "sql-ledger", payload, cron: "*/4 * * * * *", timezone: "Europe/London", ...common });
    else ledger.push({ name, handler: "sql-ledger", payload, everySeconds: CADENCES[i % CADENCES.length], ...common });
  }
  const fail: ScheduleBody = { name: `chaos-${runTag}-fail`, handler: "fail", payload: { nonRetryable: true }, everySeconds: 10, ...common };
  const later = (n: number): ScheduleBody => ({ name: `chaos-${runTag}-late-${n}`, handler: "sql-ledger", payload: { delayMs: 300 }, everySeconds: 3 + n, ...common });
  return { ledger, fail, later };
}
