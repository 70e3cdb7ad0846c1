"use client";

import Link from "next/link";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { useEffect, useState } from "react";
import { keepPreviousData, useQuery, useQueryClient } from "@tanstack/react-query";
import { bulkSchedules } from "@/lib/client/bulk";
import { overviewKey } from "@/lib/client/overview";
import { useCanOperate } from "@/lib/client/me";
import { schedulesKey, schedulesPageQuery, type ScheduleListParams } from "@/lib/client/schedules";
import { useDebounced } from "@/lib/client/use-debounced";
import { useLatestSearchParams } from "@/lib/client/latest-search-params";
import { BulkAction } from "./bulk-action";
import { SchedulesTable } from "./schedules-table";
import { inputClass } from "./ui/field";
import { PageHeader } from "./ui/page-header";
import { EmptyState, ErrorState, Loading } from "./ui/states";

const STATUSES = ["healthy", "late", "failing", "backlogged", "paused"];
export const SCHEDULES_PAGE_SIZE = 50;
/** The URL's parameters: the filters and sort (shareable), the page's cursor, and the cursors of the pages before it. */
const FILTERS = ["search", "status", "tag", "owner", "handler", "queue", "managed", "timing", "sort"] as const;
type Filter = (typeof FILTERS)[number];

const selectClass = `${inputClass} w-40`;

/**
 * Schedules: search, filters and sort resolved on the server over the whole fleet, one page of 50 at
 * a time (keyset cursors, lib/schedules/list.ts). Everything the page shows is in its URL, the
 * cursors of the pages before it included (`back`), so a copied link opens the same page and
 * Previous works after a reload.
 */
export function SchedulesView() {
  const router = useRouter();
  const pathname = usePathname();
  const sp = useSearchParams();
  const get = (k: Filter) => sp.get(k) ?? "";
  const cursor = sp.get("cursor") ?? "";
  const back = sp.getAll("back");
  const canOperate = useCanOperate();
  const [notice, setNotice] = useState<string | null>(null);
  const qc = useQueryClient();

  const written = useLatestSearchParams();

  /** Write the URL: a filter change starts again at the first page. Built on the URL last written, so quick changes add up. */
  const navigate = (changes: Partial<Record<Filter, string>>, page?: { cursor: string; back: string[] }) => {
    const base = written.latest();
    const next = new URLSearchParams();
    for (const k of FILTERS) {
      const v = k in changes ? changes[k] : (base.get(k) ?? "");
      if (v) next.set(k, v);
    }
    if (page?.cursor) {
      next.set("cursor", page.cursor);
      for (const b of page.back) next.append("back", b);
    }
    written.wrote(next);
    const qs = next.toString();
    router.replace(`${pathname}${qs ? `?${qs}` : ""}`, { scroll: false });
  };

  // Text filters are typed: the URL (and the request) follows once typing pauses.
  const [text, setText] = useState({ search: get("search"), tag: get("tag"), owner: get("owner"), handler: get("handler"), queue: get("queue") });
  const settled = useDebounced(text, 300);
  useEffect(() => {
    if ((Object.keys(settled) as (keyof typeof settled)[]).some((k) => settled[k] !== get(k))) navigate(settled);
    // Only a settled edit writes the URL; reading the URL again here would undo a Back navigation.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [settled]);

  const params: ScheduleListParams = { limit: String(SCHEDULES_PAGE_SIZE), cursor };
  for (const k of FILTERS) params[k] = get(k);
  const q = useQuery({ ...schedulesPageQuery(params), placeholderData: keepPreviousData });

  const done = async (message: string) => {
    setNotice(message);
    await Promise.all([qc.invalidateQueries({ queryKey: schedulesKey }), qc.invalidateQueries({ queryKey: overviewKey })]);
  };
  const anyFilter = FILTERS.some((k) => k !== "sort" && get(k));
  const bulkFilter = { search: get("search"), status: get("status"), tag: get("tag"), owner: get("owner") };
  const bulkKey = Object.values(bulkFilter).join("|");
  // The bulk route takes search, one status, tag and owner; with another filter on, it would reach more than the list shows.
  const bulkable =
    canOperate && Object.values(bulkFilter).some(Boolean) && !get("handler") && !get("queue") && !get("managed") && !get("timing") && !get("status").includes(",");
  const pageNumber = back.length + 1;
  const rows = q.data?.schedules ?? [];
  const nextCursor = q.data?.nextCursor ?? null;

  return (
    <div>
      <PageHeader
        title="Schedules"
        description="Cron expressions and intervals, each in its own time zone, with its catch-up policy. Search, filters and sort cover the whole fleet."
        actions={
          canOperate && <Link href="/schedules/new" data-testid="new-schedule" className="rounded-md bg-slate-900 px-3 py-1.5 text-sm font-medium text-white hover:bg-slate-700">
            New schedule
          </Link>
        }
      />
      <div className="mb-4 flex flex-wrap items-end gap-3" role="search" aria-label="Search and filter schedules">
        <label className="flex flex-col text-xs text-slate-600">
          Search
          <input type="search" placeholder="Name, handler, description…" className={`${inputClass} w-64`} value={text.search} onChange={(e) => setText({ ...text, search: e.target.value })} data-testid="schedule-search" />
        </label>
        <label className="flex flex-col text-xs text-slate-600">
          Status
          <select className={selectClass} value={get("status")} onChange={(e) => navigate({ status: e.target.value })} aria-label="Status" data-testid="schedule-status-filter">
            <option value="">Any status</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>{s}</option>
            ))}
          </select>
        </label>
        <label className="flex flex-col text-xs text-slate-600">
          Tag
          <input className={`${inputClass} w-32`} value={text.tag} onChange={(e) => setText({ ...text, tag: e.target.value })} data-testid="schedule-tag-filter" />
        </label>
        <label className="flex flex-col text-xs text-slate-600">
          Owner
          <input className={`${inputClass} w-32`} value={text.owner} onChange={(e) => setText({ ...text, owner: e.target.value })} data-testid="schedule-owner-filter" />
        </label>
        <label className="flex flex-col text-xs text-slate-600">
          Handler
          <input className={`${inputClass} w-32`} value={text.handler} onChange={(e) => setText({ ...text, handler: e.target.value })} data-testid="schedule-handler-filter" />
        </label>
        <label className="flex flex-col text-xs text-slate-600">
          Queue
          <input className={`${inputClass} w-32`} value={text.queue} onChange={(e) => setText({ ...text, queue: e.target.value })} data-testid="schedule-queue-filter" />
        </label>
        <label className="flex flex-col text-xs text-slate-600">
          Managed by
          <select className={selectClass} value={get("managed")} onChange={(e) => navigate({ managed: e.target.value })} aria-label="Managed by" data-testid="schedule-managed-filter">
            <option value="">Files and console</option>
            <option value="true">A schedules file</option>
            <option value="false">The console</option>
          </select>
        </label>
        <label className="flex flex-col text-xs text-slate-600">
          Timing
          <select className={selectClass} value={get("timing")} onChange={(e) => navigate({ timing: e.target.value })} aria-label="Timing" data-testid="schedule-timing-filter">
            <option value="">Cron and interval</option>
            <option value="cron">Cron</option>
            <option value="interval">Interval</option>
          </select>
        </label>
        <label className="flex flex-col text-xs text-slate-600">
          Sort by
          <select className={selectClass} value={get("sort") || "name"} onChange={(e) => navigate({ sort: e.target.value === "name" ? "" : e.target.value })} aria-label="Sort by" data-testid="schedule-sort">
            <option value="name">Name</option>
            <option value="nextDue">Next slot</option>
            <option value="lastSuccess">Longest since success</option>
            <option value="status">Status (most urgent first)</option>
          </select>
        </label>
        {bulkable ? (
          <span className="flex flex-wrap items-center gap-2" data-testid="bulk-schedules">
            <BulkAction key={`p-${bulkKey}`} label="Pause all matching…" verb="Paused" noun="schedule" run={(dry, note) => bulkSchedules("pause", bulkFilter, dry, note)} onDone={done} testId="bulk-pause" noteLabel="Note (optional)" />
            <BulkAction key={`r-${bulkKey}`} label="Resume all matching…" verb="Resumed" noun="schedule" run={(dry) => bulkSchedules("resume", bulkFilter, dry)} onDone={done} testId="bulk-resume" />
          </span>
        ) : null}
        {notice ? <span role="status" className="self-center text-sm text-slate-600" data-testid="notice">{notice}</span> : null}
      </div>
      {q.isPending ? (
        <Loading />
      ) : q.isError ? (
        <ErrorState error={q.error} retry={() => q.refetch()} />
      ) : rows.length === 0 && !anyFilter && !cursor ? (
        <EmptyState title="No schedules yet" testId="schedules-empty">
          <Link href="/schedules/new" className="underline">Create the first one</Link>.
        </EmptyState>
      ) : rows.length === 0 ? (
        <EmptyState title={nextCursor ? "No match among the schedules looked at so far" : "No schedule matches these filters"} testId="schedules-no-match">
          {nextCursor ? <p>The status is worked out a few thousand schedules at a time: the next page looks further.</p> : null}
        </EmptyState>
      ) : (
        <SchedulesTable schedules={rows} />
      )}
      <nav className="mt-4 flex items-center gap-3 text-sm" aria-label="Pages of schedules" data-testid="schedules-pager">
        <button
          type="button"
          className="rounded-md border border-slate-300 px-3 py-1.5 disabled:opacity-40"
          disabled={!cursor}
          onClick={() => navigate({}, { cursor: back.at(-1) ?? "", back: back.slice(0, -1) })}
          data-testid="schedules-prev"
        >
          Previous page
        </button>
        <span aria-live="polite" data-testid="schedules-page-number">Page {pageNumber}</span>
        <button
          type="button"
          className="rounded-md border border-slate-300 px-3 py-1.5 disabled:opacity-40"
          disabled={!nextCursor || q.isPlaceholderData}
          onClick={() => nextCursor && navigate({}, { cursor: nextCursor, back: [...back, cursor] })}
          data-testid="schedules-next"
        >
          Next page
        </button>
      </nav>
    </div>
  );
}
