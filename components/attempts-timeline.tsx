import type { RunDetail } from "@/lib/client/runs";
import { AttemptOutput } from "./attempt-output";
import { Badge, type Tone } from "./ui/badge";
import { Time } from "./ui/time";

const OUTCOME_TONE: Record<string, Tone> = { succeeded: "green", failed: "red", timed_out: "amber", lease_expired: "amber", aborted: "slate" };

/** Each attempt of one slot: which worker, when, how long, how it ended, its error as text, and what it left (result, log, stdout, stderr). */
export function AttemptsTimeline({ attempts }: { attempts: RunDetail["attemptsList"] }) {
  if (attempts.length === 0) return <p className="text-sm text-slate-500" data-testid="attempts-empty">No attempt yet: the run has not been claimed by a worker.</p>;
  return (
    <ol className="relative space-y-4 border-l border-slate-200 pl-6" data-testid="attempts-timeline">
      {attempts.map((a) => (
        <li key={a.attempt} className="relative" data-testid="attempt" data-outcome={a.outcome}>
          <span className={`absolute -left-[31px] top-1 h-3 w-3 rounded-full ring-4 ring-white ${a.outcome === "succeeded" ? "bg-emerald-500" : a.outcome === "failed" ? "bg-red-500" : "bg-amber-500"}`} />
          <div className="flex flex-wrap items-center gap-2 text-sm">
            <span className="font-semibold">Attempt {a.attempt}</span>
            <Badge tone={OUTCOME_TONE[a.outcome] ?? "slate"} testId="attempt-outcome">{a.outcome.replace("_", " ")}</Badge>
            <span className="font-mono text-xs text-slate-600" data-testid="attempt-worker">{a.workerId}</span>
          </div>
          <div className="mt-1 text-xs text-slate-600">
            <Time value={a.startedAt} /> → <Time value={a.finishedAt} fallback="still running" />
            {a.durationMs !== null ? <span className="ml-2 tabular-nums">({a.durationMs} ms)</span> : null}
          </div>
          {a.error ? <pre className="mt-2 max-h-48 overflow-auto whitespace-pre-wrap break-words rounded bg-red-50 p-2 font-mono text-xs text-red-800" data-testid="attempt-error">{a.error}</pre> : null}
          {a.output ? <AttemptOutput output={a.output} /> : null}
        </li>
      ))}
    </ol>
  );
}
