import Link from "next/link";
import type { RunView } from "@/lib/client/runs";
import { describeSkip } from "@/lib/client/run-labels";
import { RunStateBadge } from "./ui/badge";
import { StuckBadge } from "./stuck-badge";
import { Button } from "./ui/button";
import { Time } from "./ui/time";

type Props = {
  runs: RunView[];
  /** The schedule's catch-up policy, to say why a missed slot was skipped. */
  catchUp?: string;
  showSchedule?: boolean;
  selected?: Set<number>;
  onToggle?: (id: number) => void;
  onRequeue?: (id: number) => void;
  requeueing?: number | null;
  testId?: string;
};

/** Runs newest slot first: state, slot, due, started, finished, attempts, worker, and why a slot was skipped. */
export function RunHistoryTable({ runs, catchUp, showSchedule, selected, onToggle, onRequeue, requeueing, testId = "run-history" }: Props) {
  return (
    <div className="relative overflow-x-auto rounded-lg border border-slate-200 bg-white">
      <table className="min-w-full text-sm" data-testid={testId}>
        <thead className="bg-slate-50 text-left text-xs uppercase tracking-wide text-slate-500">
          <tr>
            {onToggle ? <th className="w-8 px-3 py-2"><span className="sr-only">Select</span></th> : null}
            <th className="px-3 py-2 font-medium">Run</th>
            {showSchedule ? <th className="px-3 py-2 font-medium">Schedule</th> : null}
            <th className="px-3 py-2 font-medium">State</th>
            <th className="px-3 py-2 font-medium">Slot</th>
            <th className="px-3 py-2 font-medium">Due</th>
            <th className="px-3 py-2 font-medium">Started</th>
            <th className="px-3 py-2 font-medium">Finished</th>
            <th className="px-3 py-2 text-right font-medium">Attempts</th>
            <th className="px-3 py-2 font-medium">Worker</th>
            <th className="px-3 py-2 font-medium">Why / error</th>
            {onRequeue ? <th className="px-3 py-2"><span className="sr-only">Actions</span></th> : null}
          </tr>
        </thead>
        <tbody>
          {runs.map((r) => {
            const skip = describeSkip(r, catchUp);
            return (
              <tr key={r.id} className="border-t border-slate-100 align-top hover:bg-slate-50" data-testid="run-row" data-run-id={r.id} data-state={r.state}>
                {onToggle ? (
                  <td className="px-3 py-2">
                    {r.state === "dead" ? (
                      <input type="checkbox" aria-label={`Select run ${r.id}`} checked={selected?.has(r.id) ?? false} onChange={() => onToggle(r.id)} data-testid="run-select" />
                    ) : null}
                  </td>
                ) : null}
                <td className="px-3 py-2">
                  <Link href={`/runs/${r.id}`} className="font-mono text-xs text-slate-900 hover:underline" data-testid="run-link">
                    #{r.id}
                  </Link>
                  {r.origin !== "schedule" ? <div className="text-xs text-slate-500">{r.origin.replace("_", "-")}</div> : null}
                </td>
                {showSchedule ? (
                  <td className="px-3 py-2">
                    <Link href={`/schedules/${encodeURIComponent(r.scheduleName)}`} className="hover:underline">{r.scheduleName}</Link>
                  </td>
                ) : null}
                <td className="px-3 py-2"><RunStateBadge state={r.state} /> <StuckBadge stuck={r.stuck} since={null} testId="run-stuck" /></td>
                <td className="px-3 py-2 text-xs"><Time value={r.scheduledFor} compact /></td>
                <td className="px-3 py-2 text-xs"><Time value={r.dueAt} compact /></td>
                <td className="px-3 py-2 text-xs"><Time value={r.startedAt} compact /></td>
                <td className="px-3 py-2 text-xs"><Time value={r.finishedAt} compact /></td>
                <td className="px-3 py-2 text-right tabular-nums" data-testid="run-attempts">{r.attempts}/{r.maxAttempts}</td>
                <td className="px-3 py-2 font-mono text-xs" data-testid="run-worker">{r.workerId ?? r.leaseOwner ?? "—"}</td>
                <td className="max-w-xs px-3 py-2 text-xs">
                  {skip ? <span className="text-slate-600" data-testid="skip-reason">{skip}</span> : r.lastError ? <span className="line-clamp-2 break-words text-red-700" title={r.lastError}>{r.lastError}</span> : null}
                </td>
                {onRequeue ? (
                  <td className="px-3 py-2 text-right">
                    {r.state === "dead" ? (
                      <Button size="sm" className="whitespace-nowrap" onClick={() => onRequeue(r.id)} disabled={requeueing === r.id} data-testid="requeue-run">
                        {requeueing === r.id ? "Re-queuing…" : "Re-queue"}
                      </Button>
                    ) : null}
                  </td>
                ) : null}
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
