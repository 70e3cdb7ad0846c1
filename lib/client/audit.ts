import { infiniteQueryOptions } from "@tanstack/react-query";
import type { AuditView } from "../audit/queries";
import { fetchJson, LIVE_REFRESH_MS } from "./api";

export type { AuditView };
/** Filters of the audit views; every one optional. */
export type AuditFilters = { schedule?: string; actor?: string; action?: string; from?: string; to?: string };
type AuditPage = { entries: AuditView[]; nextCursor: number | null };

export const auditKey = (f: AuditFilters) => ["audit", f] as const;

function query(f: AuditFilters, cursor: number | null, limit: number, withSchedule: boolean): string {
  const q = new URLSearchParams({ limit: String(limit) });
  if (withSchedule && f.schedule) q.set("schedule", f.schedule);
  if (f.actor) q.set("actor", f.actor);
  if (f.action) q.set("action", f.action);
  if (f.from) q.set("from", new Date(f.from).toISOString());
  if (f.to) q.set("to", new Date(f.to).toISOString());
  if (cursor !== null) q.set("cursor", String(cursor));
  return q.toString();
}

/** The whole audit log, newest first, page by page; the first page polled. */
export const auditQuery = (f: AuditFilters, limit = 50) =>
  infiniteQueryOptions({
    queryKey: auditKey(f),
    queryFn: ({ signal, pageParam }) => fetchJson<AuditPage>(`/api/audit?${query(f, pageParam, limit, true)}`, { signal }),
    initialPageParam: null as number | null,
    getNextPageParam: (last) => last.nextCursor,
    refetchInterval: LIVE_REFRESH_MS,
  });

/** One schedule's audit entries (GET /api/schedules/{name}/audit). */
export const scheduleAuditQuery = (name: string, limit = 20) =>
  infiniteQueryOptions({
    queryKey: ["audit", "schedule", name] as const,
    queryFn: ({ signal, pageParam }) => fetchJson<AuditPage>(`/api/schedules/${encodeURIComponent(name)}/audit?${query({}, pageParam, limit, false)}`, { signal }),
    initialPageParam: null as number | null,
    getNextPageParam: (last) => last.nextCursor,
    refetchInterval: LIVE_REFRESH_MS,
  });
