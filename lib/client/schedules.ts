import { queryOptions } from "@tanstack/react-query";
import type { ScheduleHealth } from "../health/schedule-health";
import type { ScheduleView } from "../schedules/view";
import type { HandlerInfo } from "../workers/registry";
import { fetchJson, LIVE_REFRESH_MS } from "./api";

/** A schedule as the console reads it: the API view plus its health (on the list and on one). */
export type Schedule = ScheduleView & Partial<Omit<ScheduleHealth, "rules" | "ageSeconds" | "stuckRun">> & { stuck?: boolean; stuckSince?: string | null };
export type { HandlerInfo };
/** A handler as GET /api/handlers lists it: the "may run twice" warning when not idempotent, and its fleet-wide limit (null: none). */
export type HandlerListing = HandlerInfo & { warning?: string; maxConcurrent: number | null };

export const schedulesKey = ["schedules"] as const;
export const scheduleKey = (name: string) => ["schedules", "one", name] as const;
export const handlersKey = ["handlers"] as const;

const path = (name: string) => `/api/schedules/${encodeURIComponent(name)}`;

/** Every live schedule with its health, polled. */
export const schedulesQuery = () =>
  queryOptions({
    queryKey: schedulesKey,
    queryFn: async ({ signal }) => (await fetchJson<{ schedules: Schedule[] }>("/api/schedules?limit=500", { signal })).schedules,
    refetchInterval: LIVE_REFRESH_MS,
  });

/** The list's filters, sort and cursor as GET /api/schedules takes them (lib/schedules/list.ts); empty values are left out. */
export type ScheduleListParams = Partial<Record<"search" | "status" | "tag" | "owner" | "handler" | "queue" | "managed" | "paused" | "timing" | "sort" | "cursor" | "limit", string>>;

/** One page of the fleet, searched, filtered and sorted on the server; `nextCursor` is null on the last page. */
export const schedulesPageQuery = (params: ScheduleListParams) => {
  const qs = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => !!e[1])).toString();
  return queryOptions({
    queryKey: [...schedulesKey, "page", qs] as const,
    queryFn: ({ signal }) => fetchJson<{ schedules: Schedule[]; nextCursor: string | null }>(`/api/schedules${qs ? `?${qs}` : ""}`, { signal }),
    refetchInterval: LIVE_REFRESH_MS,
  });
};

/** One schedule by name with its health, polled. */
export const scheduleQuery = (name: string) =>
  queryOptions({
    queryKey: scheduleKey(name),
    queryFn: async ({ signal }) => (await fetchJson<{ schedule: Schedule }>(path(name), { signal })).schedule,
    refetchInterval: LIVE_REFRESH_MS,
  });

/** Handlers a schedule may name: built-ins plus what workers registered, each with its fleet-wide limit. */
export const handlersQuery = () =>
  queryOptions({
    queryKey: handlersKey,
    queryFn: async ({ signal }) => (await fetchJson<{ handlers: HandlerListing[] }>("/api/handlers", { signal })).handlers,
    staleTime: 30_000,
  });

export type TimingPreview = { description: string | null; nextFireTimes: string[]; error?: { code: string; message: string; field: string } };
export type TimingParams = { cron?: string; everySeconds?: number | null; timezone: string };

/** The next fire times of a timing in its zone, from the server (the database clock). */
export const timingPreviewQuery = (t: TimingParams) =>
  queryOptions({
    queryKey: ["timing-preview", t.cron ?? null, t.everySeconds ?? null, t.timezone] as const,
    queryFn: ({ signal }) => {
      const q = new URLSearchParams({ timezone: t.timezone, count: "5" });
      if (t.cron) q.set("cron", t.cron);
      if (t.everySeconds) q.set("everySeconds", String(t.everySeconds));
      return fetchJson<TimingPreview>(`/api/timing/preview?${q}`, { signal });
    },
    staleTime: 10_000,
  });

/** The body the form sends (POST /api/schedules's body; PATCH adds `version`). */
export type ScheduleBody = Record<string, unknown>;

/** A save's answer: the schedule, and warnings that did not stop the save (e.g. an outbound-policy note on `payload.url`). */
export type SaveResult = { schedule: Schedule; warnings?: { field: string; message: string }[] };

export const createSchedule = (body: ScheduleBody) => fetchJson<SaveResult>("/api/schedules", { method: "POST", json: body });
export const patchSchedule = (name: string, body: ScheduleBody & { version: number }) => fetchJson<SaveResult>(path(name), { method: "PATCH", json: body });
export const deleteSchedule = (name: string, keepHistory: boolean) =>
  fetchJson<unknown>(`${path(name)}?history=${keepHistory ? "keep" : "delete"}`, { method: "DELETE" });
/** Pause; a note keeps it paused through applies, and `resumeAt` (ISO) has a worker resume it then. */
export const pauseSchedule = (name: string, hold: { note?: string; resumeAt?: string } = {}) =>
  fetchJson<unknown>(`${path(name)}/pause`, { method: "POST", json: { ...(hold.note ? { note: hold.note } : {}), ...(hold.resumeAt ? { resumeAt: hold.resumeAt } : {}) } });
export const resumeSchedule = (name: string) => fetchJson<unknown>(`${path(name)}/resume`, { method: "POST", json: {} });
/** A manual run now; `payload`, when given, is this run's in place of the schedule's. */
export const runScheduleNow = (name: string, payload?: Record<string, unknown>) =>
  fetchJson<{ run?: { id: number } }>(`${path(name)}/run-now`, { method: "POST", json: payload === undefined ? {} : { payload } });

/** POST /backfill's answer: slots in range, how many already had a run, created (or wouldCreate on a dry run). */
export type BackfillResult = { dryRun?: boolean; slots?: number; existing?: number; created?: number; wouldCreate?: number };
export const backfillSchedule = (name: string, body: { from: string; to: string; dryRun?: boolean }) =>
  fetchJson<BackfillResult>(`${path(name)}/backfill`, { method: "POST", json: body });
