import { infiniteQueryOptions, queryOptions } from "@tanstack/react-query";
import type { RunDetail, RunPage, RunView } from "../runs/history";
import { fetchJson, LIVE_REFRESH_MS } from "./api";

export type { RunDetail, RunView };
/** `upcoming: false` hides slots the tick materialised ahead of the database clock. */
export type RunFilters = { state?: string; schedule?: string; from?: string; to?: string; upcoming?: boolean };

export const runsKey = ["runs"] as const;
export const runListKey = (f: RunFilters) => ["runs", "list", f] as const;
export const scheduleRunsKey = (name: string, f: RunFilters = {}) => ["runs", "schedule", name, f] as const;
export const runKey = (id: number) => ["runs", "one", id] as const;

function query(f: RunFilters, cursor: string | null, limit: number): string {
  const q = new URLSearchParams({ limit: String(limit) });
  if (f.state) q.set("state", f.state);
  if (f.schedule) q.set("schedule", f.schedule);
  if (f.from) q.set("from", new Date(f.from).toISOString());
  if (f.to) q.set("to", new Date(f.to).toISOString());
  if (f.upcoming === false) q.set("upcoming", "false");
  if (cursor) q.set("cursor", cursor);
  return q.toString();
}

/** Runs across schedules, newest slot first, page by page (keyset cursor), the first page polled. */
export const runListQuery = (f: RunFilters, limit = 50) =>
  infiniteQueryOptions({
    queryKey: runListKey(f),
    queryFn: ({ signal, pageParam }) => fetchJson<RunPage>(`/api/runs?${query(f, pageParam, limit)}`, { signal }),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
    refetchInterval: LIVE_REFRESH_MS,
  });

/** A schedule's history, newest slot first. */
export const scheduleRunsQuery = (name: string, f: RunFilters = {}, limit = 50) =>
  infiniteQueryOptions({
    queryKey: scheduleRunsKey(name, f),
    queryFn: ({ signal, pageParam }) =>
      fetchJson<RunPage>(`/api/schedules/${encodeURIComponent(name)}/runs?${query({ ...f, schedule: undefined }, pageParam, limit)}`, { signal }),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
    refetchInterval: LIVE_REFRESH_MS,
  });

/** One run with its attempts and idempotency key. */
export const runQuery = (id: number) =>
  queryOptions({
    queryKey: runKey(id),
    queryFn: async ({ signal }) => (await fetchJson<{ run: RunDetail }>(`/api/runs/${id}`, { signal })).run,
    refetchInterval: LIVE_REFRESH_MS,
  });

export const requeueRun = (id: number) => fetchJson<unknown>(`/api/runs/${id}/requeue`, { method: "POST", json: {} });
export const requeueRuns = (ids: number[]) => fetchJson<unknown>("/api/runs/requeue", { method: "POST", json: { ids } });

/** Settle a run by hand (lib/runs/operator-skip.ts): cancel a pending one, discard a dead one; `reason` goes to the audit log. */
export const settleRun = (id: number, action: "cancel" | "discard", reason: string) =>
  fetchJson<unknown>(`/api/runs/${id}/${action}`, { method: "POST", json: reason.trim() ? { reason: reason.trim() } : {} });
