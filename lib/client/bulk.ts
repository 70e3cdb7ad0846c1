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

export type ScheduleBulkFilters = { search?: string; status?: string };

/** Pause or resume every schedule matching the list's search and status, on the server; `dryRun` only lists them. */
export const bulkSchedules = (action: "pause" | "resume", f: ScheduleBulkFilters, dryRun: boolean) =>
  fetchJson<BulkSchedulesResult>("/api/bulk/schedules", {
    method: "POST",
    json: { action, dryRun, filter: { ...(f.search ? { search: f.search } : {}), ...(f.status ? { status: f.status } : {}) } },
  });
