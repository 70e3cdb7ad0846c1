"use client";

import { useState } from "react";
import { useInfiniteQuery, useMutation, useQueryClient } from "@tanstack/react-query";
import { useCanOperate } from "@/lib/client/me";
import { bulkRuns } from "@/lib/client/bulk";
import { overviewKey } from "@/lib/client/overview";
import { requeueRun, requeueRuns, runListQuery, runsKey, type RunFilters } from "@/lib/client/runs";
import { schedulesKey } from "@/lib/client/schedules";
import { BulkAction } from "./bulk-action";
import { RunHistoryTable } from "./run-history-table";
import { Button } from "./ui/button";
import { inputClass } from "./ui/field";
import { PageHeader } from "./ui/page-header";
import { EmptyState, ErrorState, Loading } from "./ui/states";

/** All runs with filters (state, schedule, slot time); dead runs can be re-queued one by one or as a selection. */
export function RunsView({ initialState = "" }: { initialState?: string }) {
  const qc = useQueryClient();
  const [filters, setFilters] = useState<RunFilters>({ state: initialState || undefined, upcoming: false });
  const [scheduleText, setScheduleText] = useState("");
  const [selected, setSelected] = useState<Set<number>>(new Set());
  const [notice, setNotice] = useState<string | null>(null);
  const canOperate = useCanOperate();
  const q = useInfiniteQuery(runListQuery(filters));
  const runs = q.data?.pages.flatMap((p) => p.runs) ?? [];
  const refresh = () => Promise.all([qc.invalidateQueries({ queryKey: runsKey }), qc.invalidateQueries({ queryKey: overviewKey }), qc.invalidateQueries({ queryKey: schedulesKey })]);
  const one = useMutation({ mutationFn: requeueRun, onSuccess: refresh, onError: (e) => setNotice(e.message) });
  const many = useMutation({
    mutationFn: requeueRuns,
    onSuccess: async (_r, ids) => {
      setSelected(new Set());
      setNotice(`Re-queued ${ids.length} run${ids.length === 1 ? "" : "s"}.`);
      await refresh();
    },
    onError: (e) => setNotice(e.message),
  });
  const done = async (message: string) => {
    setSelected(new Set());
    setNotice(message);
    await refresh();
  };
  const set = (patch: RunFilters) => {
    setSelected(new Set());
    setFilters((f) => ({ ...f, ...patch }));
  };
  const toggle = (id: number) =>
    setSelected((s) => {
      const n = new Set(s);
      if (n.has(id)) n.delete(id);
      else n.add(id);
      return n;
    });
  const deadIds = runs.filter((r) => r.state === "dead").map((r) => r.id);

  return (
    <div>
      <PageHeader title="Runs" description="Every slot across schedules, newest first. Dead runs exhausted their attempts and need a person: fix the cause, then re-queue." />
      <form className="mb-4 flex flex-wrap items-end gap-3" role="search" onSubmit={(e) => { e.preventDefault(); set({ schedule: scheduleText.trim() || undefined }); }}>
        <label className="text-sm">
          <span className="mb-1 block font-medium text-slate-800">State</span>
          <select className={`${inputClass} w-36`} value={filters.state ?? ""} onChange={(e) => set({ state: e.target.value || undefined })} data-testid="runs-state-filter">
            <option value="">Any</option>
            {["pending", "running", "done", "dead", "skipped"].map((s) => <option key={s} value={s}>{s}</option>)}
          </select>
        </label>
        <label className="text-sm">
          <span className="mb-1 block font-medium text-slate-800">Schedule</span>
          <input className={`${inputClass} w-48`} value={scheduleText} onChange={(e) => setScheduleText(e.target.value)} onBlur={() => set({ schedule: scheduleText.trim() || undefined })} placeholder="exact name" data-testid="runs-schedule-filter" />
        </label>
        <label className="text-sm">
          <span className="mb-1 block font-medium text-slate-800">Slot from</span>
          <input type="datetime-local" className={inputClass} value={filters.from ?? ""} onChange={(e) => set({ from: e.target.value || undefined })} />
        </label>
        <label className="text-sm">
          <span className="mb-1 block font-medium text-slate-800">Slot before</span>
          <input type="datetime-local" className={inputClass} value={filters.to ?? ""} onChange={(e) => set({ to: e.target.value || undefined })} />
        </label>
        <label className="flex items-center gap-1.5 pb-2 text-sm text-slate-700">
          <input type="checkbox" checked={filters.upcoming !== false} onChange={(e) => set({ upcoming: e.target.checked })} data-testid="runs-upcoming" /> Include upcoming slots
        </label>
        <button type="submit" className="sr-only">Apply</button>
      </form>
      <div className="mb-3 flex items-center gap-3">
        {canOperate ? (
          <>
            <Button variant="primary" disabled={selected.size === 0 || many.isPending} onClick={() => many.mutate([...selected])} data-testid="requeue-selected">
              Re-queue selected ({selected.size})
            </Button>
            <Button size="sm" variant="ghost" disabled={deadIds.length === 0} onClick={() => setSelected(new Set(deadIds))} data-testid="select-all-dead">
              Select all dead on this page
            </Button>
            {filters.state === "dead" ? (
              <>
                <BulkAction key={`rq-${JSON.stringify(filters)}`} label="Re-queue all matching…" verb="Re-queued" noun="dead run" run={(dry) => bulkRuns("requeue", filters, dry)} onDone={done} testId="bulk-requeue" />
                <BulkAction key={`dc-${JSON.stringify(filters)}`} label="Discard all matching…" verb="Discarded" noun="dead run" run={(dry) => bulkRuns("discard", filters, dry)} onDone={done} testId="bulk-discard" />
              </>
            ) : null}
          </>
        ) : null}
        {notice ? <span role="status" className="text-sm text-slate-600" data-testid="notice">{notice}</span> : null}
      </div>
      {q.isPending ? (
        <Loading />
      ) : q.isError ? (
        <ErrorState error={q.error} retry={() => q.refetch()} />
      ) : runs.length === 0 ? (
        <EmptyState title="No runs match" testId="runs-empty">Runs appear as workers materialise slots; try another filter.</EmptyState>
      ) : (
        <>
          <RunHistoryTable testId="runs-table" runs={runs} showSchedule selected={selected} onToggle={canOperate ? toggle : undefined} onRequeue={canOperate ? (id) => one.mutate(id) : undefined} requeueing={one.isPending ? one.variables : null} />
          {q.hasNextPage ? (
            <div className="mt-3 text-center">
              <Button onClick={() => q.fetchNextPage()} disabled={q.isFetchingNextPage} data-testid="runs-more">{q.isFetchingNextPage ? "Loading…" : "Older runs"}</Button>
            </div>
          ) : null}
        </>
      )}
    </div>
  );
}
