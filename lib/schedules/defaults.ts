/**
 * What a schedule gets for each field its creator leaves out: the one definition, used by the
 * database's column defaults (lib/db/schema.ts), the API's input (lib/schedules/input.ts, whose
 * parsed create body carries them) and the console's new-schedule form
 * (lib/client/schedule-form-values.ts). Browser-safe: a plain constant.
 *
 * The API's contract (docs/api.md, "A schedule body"): timezone UTC, catch-up latest, no max lateness, no jitter, overlap
 * allowed, a 60 s lease, enabled; retries up to 6 attempts with backoff from 30 s capped at 900 s;
 * no attempt timeout.
 */
export const SCHEDULE_DEFAULTS = {
  description: "",
  payload: {} as Record<string, unknown>,
  timezone: "UTC",
  catchUp: "latest",
  maxLatenessSeconds: null,
  jitterSeconds: 0,
  overlap: "allow",
  retry: { maxAttempts: 6, baseSeconds: 30, capSeconds: 900 },
  leaseSeconds: 60,
  enabled: true,
  tags: [] as string[],
  owner: null,
  timeoutSeconds: null,
  queue: "default",
  maxConcurrent: null,
} as const;
