import type { Schedule } from "../db/schema";
import { NEVER } from "./catch-up";
import { maskSecrets } from "../security/mask";
import { DATABASE_OUTAGE_ALLOWANCE_SECONDS, worstCaseLatenessSeconds } from "./lateness";
import { driftedFields } from "./as-code/drift";

/** A schedule as the API shows it (camelCase; the design's body plus identity and bookkeeping). */
export type ScheduleView = {
  id: number;
  name: string;
  description: string;
  handler: string;
  payload: unknown;
  cron: string | null;
  everySeconds: number | null;
  timezone: string;
  catchUp: Schedule["catchUp"];
  maxLatenessSeconds: number | null;
  jitterSeconds: number;
  overlap: Schedule["overlap"];
  retry: { maxAttempts: number; baseSeconds: number; capSeconds: number };
  leaseSeconds: number;
  enabled: boolean;
  /** The next slot the tick has not materialised yet; null when a cron expression never fires again. */
  nextSlotAt: string | null;
  partition: number;
  lateAfterSeconds: number | null;
  lateGraceSeconds: number | null;
  backlogAfterSeconds: number | null;
  tags: string[];
  owner: string | null;
  /** The `source` of the schedules file that last created or changed it; null for a console-made schedule. */
  managedBy: string | null;
  /** A managed schedule whose stored settings differ from what its file last applied (driftedFields says which). */
  drifted: boolean;
  driftedFields: string[];
  /** Why it was paused by hand (an apply leaves it paused), and when the worker resumes it; null when not set. */
  pausedNote: string | null;
  resumeAt: string | null;
  /**
   * The latest a slot's first attempt starts, in seconds after the slot, while the database is up:
   * jitter + 2 × poll interval + max(lease, 4) (lib/schedules/lateness.ts). It holds when workers
   * die, freeze, lose connections or restart, given a free slot on a live worker.
   */
  worstCaseLatenessSeconds: number;
  /** A database outage adds its own length plus up to this many seconds (the workers' reconnect back-off). */
  databaseOutageAllowanceSeconds: number;
  createdAt: string;
  updatedAt: string;
  version: number;
};

const iso = (d: Date | string) => new Date(d).toISOString();

/** Map a schedules row to its API JSON shape. */
export function toScheduleView(row: Schedule, pollIntervalMs?: number): ScheduleView {
  const next = new Date(row.nextSlotAt);
  const drift = driftedFields(row);
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    handler: row.handler,
    // Secrets (Authorization headers, passwords, tokens…) never leave the server in full.
    payload: maskSecrets(row.payload),
    cron: row.cron,
    everySeconds: row.everySeconds,
    timezone: row.timezone,
    catchUp: row.catchUp,
    maxLatenessSeconds: row.maxLatenessSeconds,
    jitterSeconds: row.jitterSeconds,
    overlap: row.overlap,
    retry: { maxAttempts: row.retryMaxAttempts, baseSeconds: row.retryBaseSeconds, capSeconds: row.retryCapSeconds },
    leaseSeconds: row.leaseSeconds,
    enabled: row.enabled,
    nextSlotAt: next.getTime() >= NEVER.getTime() ? null : next.toISOString(),
    partition: row.partition,
    lateAfterSeconds: row.lateAfterSeconds,
    lateGraceSeconds: row.lateGraceSeconds,
    backlogAfterSeconds: row.backlogAfterSeconds,
    tags: row.tags,
    owner: row.owner,
    managedBy: row.managedBy ?? null,
    drifted: drift.length > 0,
    driftedFields: drift,
    pausedNote: row.pausedNote ?? null,
    resumeAt: row.resumeAt ? iso(row.resumeAt) : null,
    worstCaseLatenessSeconds: worstCaseLatenessSeconds(row, pollIntervalMs),
    databaseOutageAllowanceSeconds: DATABASE_OUTAGE_ALLOWANCE_SECONDS,
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
    version: row.version,
  };
}
