/**
 * The idempotency key handed to every attempt of a run. It names the immutable schedule id (not
 * the renamable name) and the slot, so every attempt of one slot, on any worker, gets the same
 * key: a repeat is harmless where the handler uses it. Manual runs are not slots (many may share
 * an instant), so their key names the run instead.
 *
 * idempotencyKey(7, new Date("2024-03-01T10:45:00Z"), "schedule") === "sk:7:2024-03-01T10:45:00.000Z"
 * idempotencyKey(7, anyDate, "manual", 912) === "sk:7:manual:912"
 */
export function idempotencyKey(scheduleId: number, scheduledFor: Date, origin: string, runId?: number): string {
  if (origin === "manual") {
    if (runId === undefined) throw new TypeError("idempotencyKey: a manual run's key needs its run id");
    return `sk:${scheduleId}:manual:${runId}`;
  }
  return `sk:${scheduleId}:${scheduledFor.toISOString()}`;
}
