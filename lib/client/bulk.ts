import type { BulkRunsResult } from "../bulk/runs";
import type { BulkSchedulesResult } from "../bulk/schedules";
import { fetchJson } from "./api";
import type { RunFilters } from "./runs";

export type { BulkRunsResult, BulkSchedulesResult };

/** Re-queue or discard every dead run the Runs page's filter matches, on the server; `dryRun` only counts. */
export const bulkRuns = (action: "requeue" | "discard", f: RunFilters, dryRun: boolean) =>
  fetchJson<BulkRunsResult>("/api/bulk/runs", {
    method: "POST",
    json: {
      action,
      dryRun,
      filter: {
        ...(f.schedule ? { schedule: f.schedule } : {}),
        ...(f.from ? { from: new Date(f.from).toISOString() } : {}),
        ...(f.to ? { to: new Date(f.to).toISOString() } : {}),
      },
    },
  });

export type ScheduleBulkFilters = { search?: string; status?: string; tag?: string; owner?: string };

/**
 * Pause or resume every schedule matching the list's search, status, tag and owner, on the server;
 * `dryRun` only lists them. A pause may carry a note (kept through applies of a schedules file).
 */
export const bulkSchedules = (action: "pause" | "resume", f: ScheduleBulkFilters, dryRun: boolean, note?: string) =>
  fetchJson<BulkSchedulesResult>("/api/bulk/schedules", {
    method: "POST",
    json: {
      action,
      dryRun,
      filter: Object.fromEntries((["search", "status", "tag", "owner"] as const).filter((k) => f[k]).map((k) => [k, f[k]])),
      ...(note ? { note } : {}),
    },
  });
