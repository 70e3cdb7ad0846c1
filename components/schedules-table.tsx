import Link from "next/link";
import type { Schedule } from "@/lib/client/schedules";
import { ManagedBadges } from "./schedule-managed";
import { TagList } from "./schedule-tags";
import { StuckBadge } from "./stuck-badge";
import { StatusBadge } from "./ui/badge";
import { Time, formatDuration } from "./ui/time";

/** The schedules list: timing, policy, health (with a stuck run's badge) and the next slot. */
export function SchedulesTable({ schedules }: { schedules: Schedule[] }) {
  return (
    <div className="relative overflow-x-auto rounded-lg border border-slate-200 bg-white">
      <table className="min-w-full text-sm" data-testid="schedules-table">
        <thead className="bg-slate-50 text-left text-xs uppercase tracking-wide text-slate-500">
          <tr>
            <th className="px-4 py-2 font-medium">Name</th>
            <th className="px-4 py-2 font-medium">Status</th>
            <th className="px-4 py-2 font-medium">Handler</th>
            <th className="px-4 py-2 font-medium">Timing</th>
            <th className="px-4 py-2 font-medium">Catch-up</th>
            <th className="px-4 py-2 text-right font-medium">Since last success</th>
            <th className="px-4 py-2 text-right font-medium">Dead</th>
            <th className="px-4 py-2 font-medium">Next slot</th>
          </tr>
        </thead>
        <tbody>
          {schedules.map((s) => (
            <tr key={s.id} className="border-t border-slate-100 hover:bg-slate-50" data-testid="schedule-row" data-name={s.name}>
              <td className="px-4 py-2">
                <Link href={`/schedules/${encodeURIComponent(s.name)}`} className="font-medium text-slate-900 hover:underline">
                  {s.name}
                </Link>
                {s.description ? <div className="max-w-xs truncate text-xs text-slate-500">{s.description}</div> : null}
                {!s.enabled && (s.pausedNote || s.resumeAt) ? (
                  <div className="max-w-xs truncate text-xs text-slate-600" data-testid="schedule-paused-note" title={s.pausedNote ?? undefined}>
                    {s.resumeAt ? <>paused until <Time value={s.resumeAt} /></> : "paused"}
                    {s.pausedNote ? `: ${s.pausedNote}` : null}
                  </div>
                ) : null}
                {s.tags?.length || s.owner || s.managedBy ? (
                  <div className="mt-1 flex flex-wrap items-center gap-2 text-xs text-slate-500">
                    <TagList tags={s.tags} />
                    {s.owner ? <span data-testid="schedule-owner">owner: {s.owner}</span> : null}
                    <ManagedBadges schedule={s} />
                  </div>
                ) : null}
              </td>
              <td className="px-4 py-2">
                <div className="flex flex-wrap items-center gap-1">
                  <StatusBadge status={s.status ?? (s.enabled ? undefined : "paused")} />
                  <StuckBadge stuck={s.stuck} since={s.stuckSince} testId="schedule-row-stuck" />
                </div>
              </td>
              <td className="px-4 py-2 font-mono text-xs">{s.handler}</td>
              <td className="px-4 py-2 font-mono text-xs text-slate-600">
                {s.cron ? `${s.cron}${s.timezone !== "UTC" ? ` (${s.timezone})` : ""}` : `every ${formatDuration(s.everySeconds)}`}
              </td>
              <td className="px-4 py-2 text-xs">{s.catchUp}{s.maxLatenessSeconds ? ` · max ${formatDuration(s.maxLatenessSeconds)}` : ""}</td>
              <td className="px-4 py-2 text-right tabular-nums">{s.sinceLastSuccessSeconds === undefined ? "—" : s.sinceLastSuccessSeconds === null ? <span className="text-slate-500">never</span> : formatDuration(s.sinceLastSuccessSeconds)}</td>
              <td className={`px-4 py-2 text-right tabular-nums ${(s.deadRuns ?? 0) > 0 ? "font-semibold text-red-700" : ""}`}>{s.deadRuns ?? "—"}</td>
              <td className="px-4 py-2 text-xs"><Time value={s.enabled ? s.nextSlotAt : null} fallback={s.enabled ? "never" : "paused"} /></td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
