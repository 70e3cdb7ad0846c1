import type { Schedule } from "@/lib/client/schedules";
import { Badge } from "./ui/badge";
import { Time } from "./ui/time";

type Managed = Pick<Schedule, "managedBy" | "drifted" | "driftedFields" | "pausedNote" | "resumeAt" | "enabled">;

/** On the schedules list: "managed by <source>" and, when edited since its last apply, "drifted" with the fields. */
export function ManagedBadges({ schedule: s }: { schedule: Managed }) {
  if (!s.managedBy) return null;
  return (
    <>
      <span data-testid="managed-by" title="Created or changed by an apply of this schedules file">managed by {s.managedBy}</span>
      {s.drifted ? (
        <Badge tone="amber" testId="drift-badge" title={`Differs from the file in: ${s.driftedFields.join(", ")}`}>
          drifted: {s.driftedFields.join(", ")}
        </Badge>
      ) : null}
    </>
  );
}

/**
 * On the schedule page: where it is managed from, what differs from the file, and a pause by hand:
 * its note (which applies leave alone) and the time a worker resumes it.
 */
export function ManagedNotice({ schedule: s }: { schedule: Managed }) {
  const paused = !s.enabled && (s.pausedNote || s.resumeAt);
  if (!s.managedBy && !paused) return null;
  return (
    <div className="space-y-1 rounded-lg border border-slate-200 bg-white p-3 text-sm text-slate-700" data-testid="managed-notice">
      {s.managedBy ? (
        <p>
          Managed by the schedules file <span className="font-mono" data-testid="managed-by">{s.managedBy}</span>: an edit here lasts until its next
          apply, which puts the file&apos;s values back.
        </p>
      ) : null}
      {s.managedBy && s.drifted ? (
        <p className="text-amber-900" data-testid="drift-notice">
          <Badge tone="amber" testId="drift-badge">drifted</Badge> differs from what {s.managedBy} last applied in:{" "}
          <span className="font-mono">{s.driftedFields.join(", ")}</span>.
        </p>
      ) : null}
      {paused ? (
        <p data-testid="paused-note">
          {s.resumeAt ? <>Paused until <Time value={s.resumeAt} /></> : "Paused by hand"}
          {s.pausedNote ? (
            <>: “{s.pausedNote}”. Applies keep it paused until {s.resumeAt ? "then or until it is resumed" : "it is resumed"}.</>
          ) : (
            <>, when a worker resumes it.{s.managedBy ? ` Without a note, an apply of ${s.managedBy} sets it as the file says.` : ""}</>
          )}
        </p>
      ) : null}
    </div>
  );
}
