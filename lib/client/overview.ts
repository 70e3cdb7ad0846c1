import { queryOptions } from "@tanstack/react-query";
import type { OverviewSchedule, OverviewSummary, OverviewTotals } from "../health/overview";
import { fetchJson, LIVE_REFRESH_MS } from "./api";

export type { OverviewSchedule, OverviewSummary, OverviewTotals };
export const overviewKey = ["overview"] as const;

/** The Overview: totals, counts by status, the worst schedules and the due runs' waits, polled so the page stays live. */
export const overviewQuery = () =>
  queryOptions({
    queryKey: overviewKey,
    queryFn: ({ signal }) => fetchJson<OverviewSummary>("/api/overview", { signal }),
    refetchInterval: LIVE_REFRESH_MS,
  });
