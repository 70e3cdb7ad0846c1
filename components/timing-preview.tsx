import type { TimingPreview as Preview } from "@/lib/client/schedules";
import { Time } from "./ui/time";

/** The next fire times of the timing being edited, in the schedule's zone and the viewer's. */
export function TimingPreview({ preview, timezone, loading }: { preview: Preview | undefined; timezone: string; loading: boolean }) {
  const inZone = (iso: string) => {
    try {
      return new Date(iso).toLocaleString(undefined, { timeZone: timezone, weekday: "short", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short" });
    } catch {
      return iso;
    }
  };
  return (
    <div data-testid="timing-preview" aria-live="polite" className="rounded-md border border-slate-200 bg-slate-50 p-3 text-sm">
      {!preview ? (
        <p className="text-slate-500">{loading ? "Computing next fire times…" : "Enter a cron expression or an interval."}</p>
      ) : preview.error ? (
        <p className="text-slate-500">No preview: fix the timing above.</p>
      ) : (
        <>
          <p className="font-medium text-slate-800" data-testid="timing-description">{preview.description}</p>
          <p className="mt-2 text-xs uppercase tracking-wide text-slate-500">Next fire times ({timezone})</p>
          <ol className="mt-1 space-y-0.5" data-testid="next-fire-times">
            {preview.nextFireTimes.map((t) => (
              <li key={t} className="flex justify-between gap-4 tabular-nums" data-testid="next-fire-time">
                <span>{inZone(t)}</span>
                <span className="text-xs text-slate-500">
                  yours: <Time value={t} />
                </span>
              </li>
            ))}
          </ol>
        </>
      )}
    </div>
  );
}
