import { queryOptions } from "@tanstack/react-query";
import type { ScheduleHealth } from "../health/schedule-health";
import type { ScheduleView } from "../schedules/view";
import type { HandlerInfo } from "../workers/registry";
import { fetchJson, LIVE_REFRESH_MS } from "./api";

/** A schedule as the console reads it: the API view plus its health (on the list and on one). */
export type Schedule = ScheduleView & Partial<Omit<ScheduleHealth, "rules" | "ageSeconds">>;
export type { HandlerInfo };

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

/** One schedule by name with its health, polled. */
export const scheduleQuery = (name: string) =>
  queryOptions({
    queryKey: scheduleKey(name),
    queryFn: async ({ signal }) => (await fetchJson<{ schedule: Schedule }>(path(name), { signal })).schedule,
    refetchInterval: LIVE_REFRESH_MS,
  });

/** Handlers a schedule may name: built-ins plus what workers registered. */
export const handlersQuery = () =>
  queryOptions({
    queryKey: handlersKey,
    queryFn: async ({ signal }) => (await fetchJson<{ handlers: HandlerInfo[] }>("/api/handlers", { signal })).handlers,
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

/** The body the form sends (the design's schedule body; PATCH adds `version`). */
export type ScheduleBody = Record<string, unknown>;

/** A save's answer: the schedule, and warnings that did not stop the save (e.g. an outbound-policy note on `payload.url`). */
export type SaveResult = { schedule: Schedule; warnings?: { field: string; message: string }[] };

export const createSchedule = (body: ScheduleBody) => fetchJson<SaveResult>("/api/schedules", { method: "POST", json: body });
export const patchSchedule = (name: string, body: ScheduleBody & { version: number }) => fetchJson<SaveResult>(path(name), { method: "PATCH", json: body });
export const deleteSchedule = (name: string, keepHistory: boolean) =>
  fetchJson<unknown>(`${path(name)}?history=${keepHistory ? "keep" : "delete"}`, { method: "DELETE" });
export const pauseSchedule = (name: string) => fetchJson<unknown>(`${path(name)}/pause`, { method: "POST", json: {} });
export const resumeSchedule = (name: string) => fetchJson<unknown>(`${path(name)}/resume`, { method: "POST", json: {} });
export const runScheduleNow = (name: string) => fetchJson<{ run?: { id: number } }>(`${path(name)}/run-now`, { method: "POST", json: {} });

/** POST /backfill's answer: slots in range, how many already had a run, created (or wouldCreate on a dry run). */
export type BackfillResult = { dryRun?: boolean; slots?: number; existing?: number; created?: number; wouldCreate?: number };
export const backfillSchedule = (name: string, body: { from: string; to: string; dryRun?: boolean }) =>
  fetchJson<BackfillResult>(`${path(name)}/backfill`, { method: "POST", json: body });
