import Link from "next/link";
import type { OverviewSchedule } from "@/lib/client/overview";
import { StatusBadge } from "./ui/badge";
import { formatDuration } from "./ui/time";

function timingText(s: Pick<OverviewSchedule, "cron" | "everySeconds" | "timezone">): string {
  if (s.everySeconds) return `every ${formatDuration(s.everySeconds)}`;
  return `${s.cron} ${s.timezone !== "UTC" ? `(${s.timezone})` : ""}`.trim();
}

/** Schedules' three health numbers and status; `caption` names the table for screen readers. */
export function ScheduleHealthTable({ schedules, caption, testId = "overview-schedules", rowTestId = "overview-schedule-row" }: { schedules: OverviewSchedule[]; caption: string; testId?: string; rowTestId?: string }) {
  return (
    <div className="relative overflow-x-auto rounded-lg border border-slate-200 bg-white">
      <table className="min-w-full text-sm" data-testid={testId}>
        <caption className="sr-only">{caption}</caption>
        <thead className="bg-slate-50 text-left text-xs uppercase tracking-wide text-slate-500">
          <tr>
            <th className="px-4 py-2 font-medium">Schedule</th>
            <th className="px-4 py-2 font-medium">Status</th>
            <th className="px-4 py-2 font-medium">Timing</th>
            <th className="px-4 py-2 text-right font-medium">Since last success</th>
            <th className="px-4 py-2 text-right font-medium">Dead runs</th>
            <th className="px-4 py-2 text-right font-medium">Oldest pending</th>
          </tr>
        </thead>
        <tbody>
          {schedules.map((s) => (
            <tr key={s.id} className="border-t border-slate-100 hover:bg-slate-50" data-testid={rowTestId} data-name={s.name}>
              <td className="px-4 py-2">
                <Link href={`/schedules/${encodeURIComponent(s.name)}`} className="font-medium text-slate-900 hover:underline">
                  {s.name}
                </Link>
                <div className="text-xs text-slate-500">{s.handler}</div>
              </td>
              <td className="px-4 py-2"><StatusBadge status={s.status} /></td>
              <td className="px-4 py-2 font-mono text-xs text-slate-600">{timingText(s)}</td>
              <td className="px-4 py-2 text-right tabular-nums" title={s.lateAfterSeconds ? `late after ${formatDuration(s.lateAfterSeconds)}` : undefined}>
                {s.sinceLastSuccessSeconds === null ? <span className="text-slate-500">never</span> : formatDuration(s.sinceLastSuccessSeconds)}
              </td>
              <td className={`px-4 py-2 text-right tabular-nums ${s.deadRuns > 0 ? "font-semibold text-red-700" : ""}`}>{s.deadRuns}</td>
              <td className="px-4 py-2 text-right tabular-nums">{formatDuration(s.oldestPendingAgeSeconds)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
