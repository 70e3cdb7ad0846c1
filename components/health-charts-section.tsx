"use client";

import { useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { CHART_WINDOW_OPTIONS, chartsQuery, type ChartWindow } from "@/lib/client/charts";
import { HealthCharts } from "./health-charts";
import { ErrorState, Loading } from "./ui/states";
import { WindowPicker } from "./ui/window-picker";

/** "Health over time" with its window picker: every schedule's charts, or one schedule's. */
export function HealthChartsSection({ schedule, enabled = true }: { schedule?: string; enabled?: boolean }) {
  const [chartWindow, setChartWindow] = useState<ChartWindow>("1h");
  const charts = useQuery({ ...chartsQuery(chartWindow, schedule), enabled });
  return (
    <section>
      <div className="mb-3 flex items-center justify-between">
        <h2 className="text-sm font-semibold text-slate-800">Health over time</h2>
        <WindowPicker value={chartWindow} options={CHART_WINDOW_OPTIONS} onChange={setChartWindow} />
      </div>
      {charts.isPending ? <Loading label="Loading charts…" /> : charts.isError ? <ErrorState error={charts.error} retry={() => charts.refetch()} /> : <HealthCharts charts={charts.data} />}
    </section>
  );
}
