import { queryOptions } from "@tanstack/react-query";
import type { OverviewSchedule, OverviewTotals } from "../health/overview";
import { fetchJson, LIVE_REFRESH_MS } from "./api";

export type { OverviewSchedule, OverviewTotals };
export const overviewKey = ["overview"] as const;

/** The Overview: header totals and every schedule with its health, polled so the page stays live. */
export const overviewQuery = () =>
  queryOptions({
    queryKey: overviewKey,
    queryFn: ({ signal }) => fetchJson<{ totals: OverviewTotals; schedules: OverviewSchedule[] }>("/api/overview", { signal }),
    refetchInterval: LIVE_REFRESH_MS,
  });
