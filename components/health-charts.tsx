"use client";

import { Bar, BarChart, CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import type { HealthCharts as Charts } from "@/lib/client/charts";
import { formatDuration } from "./ui/time";

// The palette lives in app/globals.css (--chart-1…12 and the outcome colours), with its dark-mode shades.
const SERIES_COLORS = 12;
const seriesColor = (i: number) => `var(--chart-${(i % SERIES_COLORS) + 1})`;
const GRID = "var(--color-slate-200)";
const AXIS = "var(--color-slate-500)";
// Recharts paints legend text in the series colour; the text stays neutral (readable in both modes)
// and the swatch beside it carries the colour.
const legendText = (value: string) => <span className="text-slate-700">{value}</span>;
const tooltipBox = { backgroundColor: "var(--color-white)", borderColor: "var(--color-slate-200)", color: "var(--color-slate-900)" };

function tickTime(bucketSeconds: number) {
  return (iso: string) => {
    const d = new Date(iso);
    return bucketSeconds >= 3600
      ? d.toLocaleDateString(undefined, { month: "short", day: "numeric" }) + " " + d.toLocaleTimeString(undefined, { hour: "2-digit" })
      : d.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
  };
}

const BUCKET_LABEL: Record<number, string> = { 60: "minute", 900: "15 minutes", 7200: "2 hours" };

const tooltipTime = (iso: unknown) => `${new Date(String(iso)).toLocaleString()}`;

function ChartCard({ title, hint, children, testId }: { title: string; hint: string; children: React.ReactNode; testId: string }) {
  return (
    <figure data-testid={testId} className="rounded-lg border border-slate-200 bg-white p-4">
      <figcaption className="mb-2">
        <span className="text-sm font-semibold text-slate-800">{title}</span>
        <span className="ml-2 text-xs text-slate-500">{hint}</span>
      </figcaption>
      <div className="h-56">{children}</div>
    </figure>
  );
}

/** Since-last-success and oldest-pending-age per schedule, and runs by outcome, over the chosen window. */
export function HealthCharts({ charts }: { charts: Charts }) {
  const fmt = tickTime(charts.bucketSeconds);
  const seriesLines = (data: Charts["sinceLastSuccess"]) => (
    <ResponsiveContainer width="100%" height="100%">
      <LineChart data={data} margin={{ top: 4, right: 8, left: 0, bottom: 0 }}>
        <CartesianGrid stroke={GRID} strokeDasharray="3 3" />
        <XAxis dataKey="t" tickFormatter={fmt} minTickGap={40} fontSize={11} stroke={AXIS} />
        <YAxis tickFormatter={(v: number) => formatDuration(v)} allowDecimals={false} width={64} fontSize={11} stroke={AXIS} />
        <Tooltip contentStyle={tooltipBox} labelFormatter={tooltipTime} formatter={(v) => formatDuration(Number(v))} />
        {charts.series.length > 1 ? <Legend wrapperStyle={{ fontSize: 11 }} formatter={legendText} /> : null}
        {charts.series.map((s, i) => (
          <Line key={s.key} type="monotone" dataKey={s.key} name={s.name} stroke={seriesColor(i)} dot={false} strokeWidth={1.75} isAnimationActive={false} connectNulls />
        ))}
      </LineChart>
    </ResponsiveContainer>
  );
  return (
    <div className="grid grid-cols-1 gap-4 xl:grid-cols-3" data-testid="health-charts">
      <ChartCard title="Since last success" hint="late above two intervals" testId="chart-since-last-success">
        {seriesLines(charts.sinceLastSuccess)}
      </ChartCard>
      <ChartCard title="Oldest pending age" hint="rising = workers too few" testId="chart-oldest-pending">
        {seriesLines(charts.oldestPendingAge)}
      </ChartCard>
      <ChartCard title="Runs by outcome" hint={`per ${BUCKET_LABEL[charts.bucketSeconds] ?? formatDuration(charts.bucketSeconds)}, by slot`} testId="chart-outcomes">
        <ResponsiveContainer width="100%" height="100%">
          <BarChart data={charts.outcomes} margin={{ top: 4, right: 8, left: 0, bottom: 0 }}>
            <CartesianGrid stroke={GRID} strokeDasharray="3 3" />
            <XAxis dataKey="t" tickFormatter={fmt} minTickGap={40} fontSize={11} stroke={AXIS} />
            <YAxis allowDecimals={false} width={40} fontSize={11} stroke={AXIS} />
            <Tooltip contentStyle={tooltipBox} labelFormatter={tooltipTime} />
            <Legend wrapperStyle={{ fontSize: 11 }} formatter={legendText} />
            <Bar dataKey="done" stackId="o" fill="var(--chart-done)" isAnimationActive={false} />
            <Bar dataKey="dead" stackId="o" fill="var(--chart-dead)" isAnimationActive={false} />
            <Bar dataKey="skipped" stackId="o" fill="var(--chart-skipped)" isAnimationActive={false} />
            <Bar dataKey="waiting" stackId="o" fill="var(--chart-waiting)" isAnimationActive={false} />
          </BarChart>
        </ResponsiveContainer>
      </ChartCard>
    </div>
  );
}
