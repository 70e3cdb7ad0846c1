"use client";

import { UnservedNotice } from "./unserved-notice";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { overviewKey } from "@/lib/client/overview";
import { requeueRun, runsKey, scheduleRunsQuery } from "@/lib/client/runs";
import {
  backfillSchedule,
  deleteSchedule,
  pauseSchedule,
  resumeSchedule,
  runScheduleNow,
  scheduleKey,
  scheduleQuery,
  schedulesKey,
} from "@/lib/client/schedules";
import { useCanOperate } from "@/lib/client/me";
import { ScheduleAuditPanel } from "./audit-view";
import { HealthChartsSection } from "./health-charts-section";
import { RunHistoryTable } from "./run-history-table";
import { ScheduleActions } from "./schedule-actions";
import { ManagedNotice } from "./schedule-managed";
import { ScheduleConfig, ScheduleHealthStats } from "./schedule-summary";
import { Button } from "./ui/button";
import { PageHeader } from "./ui/page-header";
import { EmptyState, ErrorState, Loading } from "./ui/states";

/** One schedule: health, charts, configuration, actions and its run history (live). */
export function ScheduleDetailView({ name }: { name: string }) {
  const router = useRouter();
  const qc = useQueryClient();
  const schedule = useQuery(scheduleQuery(name));
  const [state, setState] = useState("");
  const [upcoming, setUpcoming] = useState(false);
  const runs = useInfiniteQuery(scheduleRunsQuery(name, { state: state || undefined, upcoming }));
  const [notice, setNotice] = useState<string | null>(null);
  const canOperate = useCanOperate();

  const refresh = () =>
    Promise.all([
      qc.invalidateQueries({ queryKey: scheduleKey(name) }),
      qc.invalidateQueries({ queryKey: runsKey }),
      qc.invalidateQueries({ queryKey: schedulesKey }),
      qc.invalidateQueries({ queryKey: overviewKey }),
    ]);
  const action = useMutation({
    mutationFn: (fn: () => Promise<unknown>) => fn(),
    onSuccess: refresh,
    onError: (e) => setNotice(e instanceof Error ? e.message : String(e)),
  });
  const requeue = useMutation({ mutationFn: requeueRun, onSuccess: refresh, onError: (e) => setNotice(e.message) });
  const remove = useMutation({
    mutationFn: (keep: boolean) => deleteSchedule(name, keep),
    onSuccess: async () => {
      qc.removeQueries({ queryKey: scheduleKey(name) });
      await Promise.all([qc.invalidateQueries({ queryKey: schedulesKey }), qc.invalidateQueries({ queryKey: overviewKey })]);
      router.push("/schedules");
    },
    onError: (e) => setNotice(e.message),
  });

  if (schedule.isPending) return <div><PageHeader title={name} /><Loading /></div>;
  if (schedule.isError) return <div><PageHeader title={name} /><ErrorState error={schedule.error} retry={() => schedule.refetch()} /></div>;
  const s = schedule.data;
  const allRuns = runs.data?.pages.flatMap((p) => p.runs) ?? [];

  return (
    <div className="space-y-6">
      <PageHeader title={s.name} description={s.description || `Runs ${s.handler} ${s.cron ? `on "${s.cron}" (${s.timezone})` : `every ${s.everySeconds}s`}.`} />
      <ManagedNotice schedule={s} />
      {canOperate ? <ScheduleActions
        enabled={s.enabled}
        busy={action.isPending || remove.isPending}
        payload={s.payload}
        onRunNow={(payload) => action.mutate(async () => { await runScheduleNow(name, payload); setNotice(payload ? "Run queued with its own payload: it appears in the history below." : "Run queued: it appears in the history below."); })}
        onPause={(hold) => action.mutate(() => pauseSchedule(name, hold))}
        onResume={() => action.mutate(() => resumeSchedule(name))}
        onEdit={() => router.push(`/schedules/${encodeURIComponent(name)}/edit`)}
        onBackfillPreview={(from, to) => backfillSchedule(name, { from, to, dryRun: true })}
        onBackfill={async (from, to) => {
          const r = await backfillSchedule(name, { from, to });
          setNotice(`Backfill created ${r.created ?? 0} run${r.created === 1 ? "" : "s"}.`);
          await refresh();
        }}
        onDelete={(keep) => remove.mutate(keep)}
      /> : null}
      {notice ? (
        <p role="status" data-testid="notice" className="flex items-center justify-between rounded-md border border-slate-200 bg-white px-3 py-2 text-sm text-slate-700">
          {notice}
          <Button size="sm" variant="ghost" onClick={() => setNotice(null)}>Dismiss</Button>
        </p>
      ) : null}
      <UnservedNotice unserved={s.unservedHandler} />
      <ScheduleHealthStats schedule={s} />
      <HealthChartsSection schedule={name} />
      <div className="grid grid-cols-1 gap-6 2xl:grid-cols-3">
        <section className="2xl:col-span-2">
          <div className="mb-3 flex items-center justify-between">
            <h2 className="text-sm font-semibold text-slate-800">Run history <span className="font-normal text-slate-500">(newest slot first)</span></h2>
            <div className="flex items-center gap-3">
              <label className="flex items-center gap-1.5 text-xs text-slate-600">
                <input type="checkbox" checked={upcoming} onChange={(e) => setUpcoming(e.target.checked)} data-testid="history-upcoming" /> Upcoming slots
              </label>
              <select aria-label="Filter runs by state" className="rounded-md border border-slate-300 bg-white px-2 py-1 text-sm" value={state} onChange={(e) => setState(e.target.value)} data-testid="history-state-filter">
                <option value="">All states</option>
                {["pending", "running", "done", "dead", "skipped"].map((x) => <option key={x} value={x}>{x}</option>)}
              </select>
            </div>
          </div>
          {runs.isPending ? (
            <Loading label="Loading runs…" />
          ) : runs.isError ? (
            <ErrorState error={runs.error} retry={() => runs.refetch()} />
          ) : allRuns.length === 0 ? (
            <EmptyState title={state ? `No ${state} runs` : "No runs yet"} testId="history-empty">Slots appear here as workers materialise them, shortly before they are due.</EmptyState>
          ) : (
            <>
              <RunHistoryTable runs={allRuns} catchUp={s.catchUp} onRequeue={canOperate ? (id) => requeue.mutate(id) : undefined} requeueing={requeue.isPending ? requeue.variables : null} />
              {runs.hasNextPage ? (
                <div className="mt-3 text-center">
                  <Button onClick={() => runs.fetchNextPage()} disabled={runs.isFetchingNextPage} data-testid="history-more">
                    {runs.isFetchingNextPage ? "Loading…" : "Older runs"}
                  </Button>
                </div>
              ) : null}
            </>
          )}
        </section>
        <ScheduleConfig schedule={s} />
      </div>
      <ScheduleAuditPanel name={name} />
    </div>
  );
}
