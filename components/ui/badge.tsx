import type { ReactNode } from "react";

const TONES = {
  green: "bg-emerald-50 text-emerald-800 ring-emerald-600/20",
  amber: "bg-amber-50 text-amber-800 ring-amber-600/20",
  red: "bg-red-50 text-red-800 ring-red-600/20",
  blue: "bg-sky-50 text-sky-800 ring-sky-600/20",
  violet: "bg-violet-50 text-violet-800 ring-violet-600/20",
  slate: "bg-slate-100 text-slate-700 ring-slate-500/20",
} as const;
export type Tone = keyof typeof TONES;

export function Badge({ tone = "slate", children, testId, title }: { tone?: Tone; children: ReactNode; testId?: string; title?: string }) {
  return (
    <span data-testid={testId} title={title} className={`inline-flex items-center rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${TONES[tone]}`}>
      {children}
    </span>
  );
}

const STATUS_TONE: Record<string, Tone> = { healthy: "green", late: "amber", backlogged: "violet", failing: "red", paused: "slate" };
const STATUS_HINT: Record<string, string> = {
  healthy: "Succeeding on time, nothing dead, nothing waiting long",
  late: "No success for more than two intervals",
  failing: "Has dead runs that need a person",
  backlogged: "A due run has waited longer than an interval: workers too few or too slow",
  paused: "Paused: no new slots run",
};

/** A schedule's health status. */
export function StatusBadge({ status, testId = "status-badge" }: { status: string | undefined; testId?: string }) {
  if (!status) return <Badge testId={testId}>unknown</Badge>;
  return (
    <Badge tone={STATUS_TONE[status] ?? "slate"} testId={testId} title={STATUS_HINT[status]}>
      {status}
    </Badge>
  );
}

const STATE_TONE: Record<string, Tone> = { pending: "blue", running: "violet", done: "green", dead: "red", skipped: "slate" };

/** A run's state. */
export function RunStateBadge({ state }: { state: string }) {
  return (
    <Badge tone={STATE_TONE[state] ?? "slate"} testId="run-state">
      {state}
    </Badge>
  );
}
