"use client";

import { useInfiniteQuery } from "@tanstack/react-query";
import { useState } from "react";
import { auditQuery, scheduleAuditQuery, type AuditFilters, type AuditView } from "@/lib/client/audit";
import { Button } from "./ui/button";
import { PageHeader } from "./ui/page-header";
import { EmptyState, ErrorState, Loading } from "./ui/states";
import { Time } from "./ui/time";

/** A before/after snapshot as JSON text; React escapes it, so hostile strings stay text. */
function Snapshot({ value, testId }: { value: unknown; testId: string }) {
  if (value === null || value === undefined) return <span className="text-slate-500">—</span>;
  return (
    <pre data-testid={testId} className="max-w-md overflow-x-auto whitespace-pre-wrap break-all text-xs text-slate-700">
      {JSON.stringify(value, null, 1)}
    </pre>
  );
}

/** Audit entries as a table: when, who, what, target, before and after. Read-only by design. */
export function AuditTable({ entries }: { entries: AuditView[] }) {
  return (
    <div className="relative overflow-x-auto">
      <table className="w-full text-left text-sm" data-testid="audit-table">
        <thead className="text-xs uppercase text-slate-500">
          <tr>
            <th className="py-2 pr-4">When</th>
            <th className="py-2 pr-4">Who</th>
            <th className="py-2 pr-4">Action</th>
            <th className="py-2 pr-4">Target</th>
            <th className="py-2 pr-4">Before</th>
            <th className="py-2 pr-4">After</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((e) => (
            <tr key={e.id} data-testid="audit-row" data-action={e.action} className="border-t border-slate-100 align-top">
              <td className="py-2 pr-4 whitespace-nowrap">
                <Time value={e.at} />
              </td>
              <td className="py-2 pr-4" data-testid="audit-actor">
                {e.actor} <span className="text-xs text-slate-500">({e.actorKind})</span>
              </td>
              <td className="py-2 pr-4 font-mono text-xs" data-testid="audit-action">
                {e.action}
              </td>
              <td className="py-2 pr-4 text-xs">
                {e.targetType}
                {e.targetId ? ` ${e.targetId}` : ""}
              </td>
              <td className="py-2 pr-4">
                <Snapshot value={e.before} testId="audit-before" />
              </td>
              <td className="py-2 pr-4">
                <Snapshot value={e.after} testId="audit-after" />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

type Paged = ReturnType<typeof useInfiniteQuery<{ entries: AuditView[]; nextCursor: number | null }>>;

function AuditPages({ q, emptyTitle }: { q: Paged; emptyTitle: string }) {
  if (q.isPending) return <Loading />;
  if (q.isError) return <ErrorState error={q.error} retry={() => q.refetch()} />;
  const entries = q.data.pages.flatMap((p) => p.entries);
  if (!entries.length) return <EmptyState title={emptyTitle} testId="audit-empty" />;
  return (
    <div className="rounded-lg border border-slate-200 bg-white p-4">
      <AuditTable entries={entries} />
      {q.hasNextPage ? (
        <Button className="mt-3" onClick={() => q.fetchNextPage()} disabled={q.isFetchingNextPage}>
          Older entries
        </Button>
      ) : null}
    </div>
  );
}

const FIELDS: { key: keyof AuditFilters; label: string; type: string; placeholder?: string }[] = [
  { key: "schedule", label: "Schedule", type: "text", placeholder: "name" },
  { key: "actor", label: "Actor", type: "text", placeholder: "operator, token:ci, local" },
  { key: "action", label: "Action", type: "text", placeholder: "schedule.update or schedule." },
  { key: "from", label: "From", type: "datetime-local" },
  { key: "to", label: "To", type: "datetime-local" },
];

/** The Audit page: every mutation, filterable by schedule, actor, action and time. */
export function AuditView() {
  const [draft, setDraft] = useState<AuditFilters>({});
  const [filters, setFilters] = useState<AuditFilters>({});
  const q = useInfiniteQuery(auditQuery(filters)) as Paged;
  return (
    <>
      <PageHeader title="Audit log" description="Who changed what, and when. Entries cannot be edited or deleted from the console." />
      <form
        className="mb-4 flex flex-wrap items-end gap-3"
        onSubmit={(e) => {
          e.preventDefault();
          setFilters(Object.fromEntries(Object.entries(draft).filter(([, v]) => v)) as AuditFilters);
        }}
      >
        {FIELDS.map((f) => (
          <label key={f.key} className="text-xs text-slate-600">
            {f.label}
            <input
              type={f.type}
              data-testid={`audit-filter-${f.key}`}
              placeholder={f.placeholder}
              value={draft[f.key] ?? ""}
              onChange={(e) => setDraft({ ...draft, [f.key]: e.target.value })}
              className="mt-1 block rounded-md border border-slate-300 px-2 py-1 text-sm"
            />
          </label>
        ))}
        <Button type="submit" data-testid="audit-apply">
          Filter
        </Button>
      </form>
      <AuditPages q={q} emptyTitle="No audit entries match." />
    </>
  );
}

/** A schedule's own audit entries, for its detail page. */
export function ScheduleAuditPanel({ name }: { name: string }) {
  const q = useInfiniteQuery(scheduleAuditQuery(name)) as Paged;
  return (
    <section data-testid="schedule-audit" className="mt-8">
      <h2 className="mb-3 text-lg font-semibold">Audit</h2>
      <AuditPages q={q} emptyTitle="No changes recorded for this schedule yet." />
    </section>
  );
}
