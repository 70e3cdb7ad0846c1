import { queryOptions } from "@tanstack/react-query";
import type { OverviewTotals } from "../health/overview";
import { fetchJson, LIVE_REFRESH_MS } from "./api";

export const overviewKey = ["overview"] as const;

/** The Overview header's totals, polled so the page stays live. */
export const overviewQuery = () =>
  queryOptions({
    queryKey: overviewKey,
    queryFn: ({ signal }) => fetchJson<{ totals: OverviewTotals }>("/api/overview", { signal }),
    refetchInterval: LIVE_REFRESH_MS,
  });
