"use client";

import Link from "next/link";
import { useMemo, useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { useCanOperate } from "@/lib/client/me";
import { schedulesQuery } from "@/lib/client/schedules";
import { SchedulesTable } from "./schedules-table";
import { inputClass } from "./ui/field";
import { PageHeader } from "./ui/page-header";
import { EmptyState, ErrorState, Loading } from "./ui/states";

const STATUSES = ["healthy", "late", "failing", "backlogged", "paused"];

/** Schedules with search (name, handler, description) and filters (status, kind of timing). */
export function SchedulesView() {
  const q = useQuery(schedulesQuery());
  const [search, setSearch] = useState("");
  const canOperate = useCanOperate();
  const [status, setStatus] = useState("");
  const [kind, setKind] = useState("");
  const shown = useMemo(() => {
    const needle = search.trim().toLowerCase();
    return (q.data ?? []).filter(
      (s) =>
        (!needle || [s.name, s.handler, s.description ?? ""].some((x) => x.toLowerCase().includes(needle))) &&
        (!status || s.status === status) &&
        (!kind || (kind === "cron" ? !!s.cron : !!s.everySeconds)),
    );
  }, [q.data, search, status, kind]);
  return (
    <div>
      <PageHeader
        title="Schedules"
        description="Cron expressions and intervals, each in its own time zone, with its catch-up policy."
        actions={
          canOperate && <Link href="/schedules/new" data-testid="new-schedule" className="rounded-md bg-slate-900 px-3 py-1.5 text-sm font-medium text-white hover:bg-slate-700">
            New schedule
          </Link>
        }
      />
      <div className="mb-4 flex flex-wrap gap-3" role="search">
        <label className="sr-only" htmlFor="schedule-search">Search schedules</label>
        <input id="schedule-search" type="search" placeholder="Search name, handler, description…" className={`${inputClass} max-w-xs`} value={search} onChange={(e) => setSearch(e.target.value)} data-testid="schedule-search" />
        <label className="sr-only" htmlFor="schedule-status">Status</label>
        <select id="schedule-status" className={`${inputClass} w-40`} value={status} onChange={(e) => setStatus(e.target.value)} data-testid="schedule-status-filter">
          <option value="">Any status</option>
          {STATUSES.map((s) => (
            <option key={s} value={s}>{s}</option>
          ))}
        </select>
        <label className="sr-only" htmlFor="schedule-kind">Timing</label>
        <select id="schedule-kind" className={`${inputClass} w-40`} value={kind} onChange={(e) => setKind(e.target.value)}>
          <option value="">Cron and interval</option>
          <option value="cron">Cron</option>
          <option value="interval">Interval</option>
        </select>
      </div>
      {q.isPending ? (
        <Loading />
      ) : q.isError ? (
        <ErrorState error={q.error} retry={() => q.refetch()} />
      ) : q.data.length === 0 ? (
        <EmptyState title="No schedules yet" testId="schedules-empty">
          <Link href="/schedules/new" className="underline">Create the first one</Link>.
        </EmptyState>
      ) : shown.length === 0 ? (
        <EmptyState title="No schedule matches these filters" testId="schedules-no-match" />
      ) : (
        <SchedulesTable schedules={shown} />
      )}
    </div>
  );
}
