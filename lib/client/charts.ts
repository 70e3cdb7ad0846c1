import { queryOptions } from "@tanstack/react-query";
import type { ChartWindow, HealthCharts } from "../health/charts";
import { fetchJson } from "./api";

export type { ChartWindow, HealthCharts };
export const CHART_WINDOW_OPTIONS: ChartWindow[] = ["1h", "24h", "7d"];

/** Health over time for one schedule, or the Overview's schedules; refreshed every 10 s (7 d: every minute). */
export const chartsQuery = (window: ChartWindow, schedule?: string) =>
  queryOptions({
    queryKey: ["charts", window, schedule ?? null] as const,
    queryFn: ({ signal }) => {
      const q = new URLSearchParams({ window });
      if (schedule) q.set("schedule", schedule);
      return fetchJson<HealthCharts>(`/api/charts?${q}`, { signal });
    },
    refetchInterval: window === "7d" ? 60_000 : 10_000,
  });
