"use client";

import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { overviewQuery, type OverviewSummary } from "@/lib/client/overview";
import { HealthChartsSection } from "./health-charts-section";
import { ScheduleHealthTable } from "./schedule-health-table";
import { PageHeader } from "./ui/page-header";
import { Stat } from "./ui/stat";
import { EmptyState, ErrorState, Loading } from "./ui/states";
import { formatDuration, Time } from "./ui/time";

const STATUS_LINKS = [
  { status: "failing", label: "Failing", tone: "bad" },
  { status: "late", label: "Late", tone: "bad" },
  { status: "backlogged", label: "Backlogged", tone: "warn" },
  { status: "healthy", label: "Healthy", tone: "default" },
  { status: "paused", label: "Paused", tone: "default" },
] as const;

// Bucket bounds start at 0.1 s: seconds as they are below a minute, formatDuration above.
const bound = (x: number) => (x < 60 ? `${x}s` : formatDuration(x));

function waitLabel(below: number | null, prev: number): string {
  if (below === null) return `${bound(prev)} or more`;
  return prev === 0 ? `under ${bound(below)}` : `${bound(prev)}–${bound(below)}`;
}

/** Due pending runs by how long they have waited: one bar per bucket, widths relative to the largest. */
function PendingWaitHistogram({ buckets }: { buckets: OverviewSummary["pendingWait"] }) {
  const max = Math.max(1, ...buckets.map((b) => b.count));
  return (
    <section aria-labelledby="pending-wait-title" className="rounded-lg border border-slate-200 bg-white p-4" data-testid="pending-wait">
      <h2 id="pending-wait-title" className="text-sm font-semibold text-slate-900">How long due runs have waited</h2>
      <p className="mb-3 text-xs text-slate-500">Pending runs whose slot has passed, by the time since their slot (the database clock).</p>
      <table className="w-full text-xs">
        <caption className="sr-only">Due pending runs by wait</caption>
        <tbody>
          {buckets.map((b, i) => (
            <tr key={i} data-testid="pending-wait-bucket">
              <th scope="row" className="w-32 py-0.5 pr-2 text-left font-normal text-slate-600">{waitLabel(b.below, i === 0 ? 0 : (buckets[i - 1].below ?? 0))}</th>
              <td className="py-0.5">
                <div className="h-3 rounded bg-slate-700" style={{ width: `${(100 * b.count) / max}%`, minWidth: b.count ? 2 : 0 }} aria-hidden />
              </td>
              <td className="w-16 py-0.5 text-right tabular-nums">{b.count}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** When the counts by status were judged (the last alert pass), and how many schedules no pass has judged yet. */
function StatusCountsFreshness({ asOf, notEvaluated }: { asOf: string | null; notEvaluated: number }) {
  return (
    <p className="text-xs text-slate-500" data-testid="status-counts-as-of">
      {asOf ? (
        <>
          As of the last alert pass at <Time value={asOf} />.
        </>
      ) : (
        "No alert pass has finished yet: the workers judge each schedule's status."
      )}{" "}
      {notEvaluated > 0 ? (
        <span data-testid="status-not-evaluated">
          {notEvaluated} {notEvaluated === 1 ? "schedule" : "schedules"} not evaluated yet{asOf ? " (made since)" : ""}, in no count above.
        </span>
      ) : null}
    </p>
  );
}

/** The Overview: totals, counts by status, the worst schedules, the due runs' waits, and health over time. */
export function OverviewView() {
  const q = useQuery(overviewQuery());
  return (
    <div>
      <PageHeader
        title="Overview"
        description="Every schedule's health at a glance: alert on the absence of success, on dead runs, and on a rising oldest-pending age. Ages come from the database clock."
      />
      {q.isPending ? (
        <Loading />
      ) : q.isError ? (
        <ErrorState error={q.error} retry={() => q.refetch()} />
      ) : (
        <div className="space-y-8">
          <div className="grid grid-cols-2 gap-4 md:grid-cols-3 lg:grid-cols-6" data-testid="overview-totals">
            <Stat label="Schedules" value={q.data.totals.schedules} testId="total-schedules" />
            <Stat label="Paused" value={q.data.totals.paused} testId="total-paused" />
            <Stat label="Workers alive" value={q.data.totals.workersAlive} tone={q.data.totals.workersAlive === 0 ? "warn" : "default"} testId="total-workers" />
            <Stat label="Pending" value={q.data.totals.pending} testId="total-pending" />
            <Stat label="Running" value={q.data.totals.running} testId="total-running" />
            <Stat label="Dead runs" value={q.data.totals.dead} tone={q.data.totals.dead > 0 ? "bad" : "default"} testId="total-dead" />
          </div>
          {q.data.totals.schedules === 0 ? (
            <EmptyState title="No schedules yet" testId="overview-empty">
              <p>
                Create one on the <Link className="underline" href="/schedules/new">new schedule</Link> form or with{" "}
                <code className="rounded bg-slate-100 px-1">POST /api/schedules</code>. Each slot of a schedule becomes one run row, created once
                however many workers tick.
              </p>
            </EmptyState>
          ) : (
            <>
              <div className="space-y-2">
                <nav aria-label="Schedules by status" className="grid grid-cols-2 gap-4 md:grid-cols-5" data-testid="overview-status-counts">
                  {STATUS_LINKS.map((s) => (
                    <Link key={s.status} href={`/schedules?status=${s.status}`} className="rounded-lg hover:ring-2 hover:ring-slate-300" aria-label={`${q.data.statusCounts[s.status]} ${s.label.toLowerCase()} schedules`}>
                      <Stat label={s.label} value={q.data.statusCounts[s.status]} tone={s.tone !== "default" && q.data.statusCounts[s.status] > 0 ? s.tone : "default"} testId={`status-count-${s.status}`} />
                    </Link>
                  ))}
                </nav>
                <StatusCountsFreshness asOf={q.data.statusAsOf} notEvaluated={q.data.notEvaluated} />
              </div>
              <section aria-labelledby="worst-success-title" className="space-y-2">
                <h2 id="worst-success-title" className="text-sm font-semibold text-slate-900">Longest since their last success</h2>
                <p className="text-xs text-slate-500">
                  The {q.data.worstSinceLastSuccess.length} worst: never succeeded first. <Link className="underline" href="/schedules?sort=lastSuccess">All schedules in this order</Link>
                </p>
                <ScheduleHealthTable schedules={q.data.worstSinceLastSuccess} caption="Schedules longest since their last success" />
              </section>
              <section aria-labelledby="worst-pending-title" className="space-y-2">
                <h2 id="worst-pending-title" className="text-sm font-semibold text-slate-900">Oldest pending</h2>
                {q.data.worstOldestPending.length === 0 ? (
                  <p className="text-xs text-slate-500" data-testid="overview-no-pending">No due run is waiting.</p>
                ) : (
                  <ScheduleHealthTable schedules={q.data.worstOldestPending} caption="Schedules whose oldest due run has waited longest" testId="overview-pending" rowTestId="overview-pending-row" />
                )}
              </section>
              <PendingWaitHistogram buckets={q.data.pendingWait} />
              <HealthChartsSection />
            </>
          )}
        </div>
      )}
    </div>
  );
}
